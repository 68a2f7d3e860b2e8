package mainvirtual

import (
	"context"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// Tools is the registry main-virtual offers to the model. Later packages
// (memory, recall, tools) fill it; main-virtual only offers and calls.
type Tools interface {
	// Offer lists the tools the model may call in this turn.
	Offer(q turn.Query) []llm.Tool
	// Call runs one call. A tool's own failure (bad arguments, a denied
	// permission, an unknown name) is a Result with IsError, which the model
	// reads; Call never fails the turn.
	Call(ctx context.Context, q turn.Query, call llm.ToolCall) turn.ToolResult
}

// area is where a stored result of r lives in later prompts.
func area(r turn.ToolResult) string {
	switch {
	case r.Quiet:
		return store.AreaNone
	case r.Transient:
		return store.AreaTurn
	}
	return store.AreaKept
}
