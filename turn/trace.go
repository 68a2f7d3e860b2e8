package turn

import (
	"time"

	"github.com/cyan-agent/cyan/llm"
)

// Trace is the record of one turn: the assembled packet and every model
// call that followed, with what each appended to the conversation. The
// provider request of step n is Packet.Messages followed by the Appended
// messages of steps 0…n-1.
type Trace struct {
	Channel   string      `json:"channel"`
	MessageID string      `json:"message_id"`
	Time      time.Time   `json:"time"`
	Model     string      `json:"model,omitempty"`
	Packet    *Packet     `json:"packet"`
	Steps     []StepTrace `json:"steps"`
	// Usage is how the turn's workspace use was reported: "tool", "trailer",
	// "lexical" (neither; main-observer's word match stands in) or "none"
	// (no workspace was shown).
	Usage string `json:"workspace_usage"`
	Error string `json:"error,omitempty"`
}

// StepTrace is one model call of a turn.
type StepTrace struct {
	Step         int            `json:"step"`
	Offered      []string       `json:"offered_tools,omitempty"`
	Output       string         `json:"output"`
	Reasoning    string         `json:"reasoning,omitempty"`
	Replies      []string       `json:"replies"`
	Empty        bool           `json:"empty_reply,omitempty"`
	ToolCalls    []llm.ToolCall `json:"tool_calls,omitempty"`
	Results      []ToolResult   `json:"tool_results,omitempty"`
	Appended     []llm.Message  `json:"appended,omitempty"`
	Usage        llm.Usage      `json:"usage"`
	FinishReason string         `json:"finish_reason,omitempty"`
	Millis       int64          `json:"ms"`
	Note         string         `json:"note,omitempty"`
	// Limits are the limit-process notices of this step.
	Limits []LimitNotice `json:"limits,omitempty"`
	Error  string        `json:"error,omitempty"`
	// Withheld is model output that never left: reasoning whose opening
	// the chat template wrote, and what followed a line the model forged
	// for another speaker ("^me [time]: …").
	Withheld string `json:"withheld,omitempty"`
	// Cut is set when the output ended before its finish: the server's
	// error, or what was missing.
	Cut string `json:"cut,omitempty"`
	// Repairs say what was fixed in the model's tool calls (a known other
	// name, unclosed JSON, a list or a number for a string, a call written
	// as text).
	Repairs []string `json:"repairs,omitempty"`
}
