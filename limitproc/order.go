package limitproc

import "github.com/cyan-agent/cyan/config"

// order is the chain: every answer and every tool call passes these stages
// in this order. A stage whose setting is zero is left out.
var order = []struct {
	name  string
	build func(config.Limits) (Stage, error)
}{
	{"forbidden", newForbidden},        // remove forbidden patterns from outgoing text
	{"output_length", newOutputLength}, // bound one answer's length
	{"message_rate", newMessageRate},   // messages per channel per minute
	{"tool_gate", newToolGate},         // tools the limit-process never lets run
	{"tool_rate", newToolRate},         // tool calls per channel per minute
	{"token_budget", newTokenBudget},   // tokens per process per hour
}
