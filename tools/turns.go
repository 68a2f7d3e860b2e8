package tools

import (
	"context"
	"encoding/json"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/turn"
)

// Turns is the registry as main-virtual's turns use it: the tools a
// turn's caller may be offered, and a call run as that caller, its outcome
// kept as the turn keeps a result (a report is quiet, a transient result
// lives for the turn only).
type Turns struct {
	Registry *Registry
	// Count, when set, hears each call's tool and decision (the metrics).
	Count func(tool, decision string)
}

// Offer lists the tools the model may call in q's turn.
func (t Turns) Offer(q turn.Query) []llm.Tool {
	c := q.Caller("")
	return t.Registry.ModelToolsTo(t.reader(q, c), c)
}

// Reader resolves q's reader (Registry.Reader): main-virtual does it once
// when a turn starts and carries it in the query (turn.Query.Reader).
func (t Turns) Reader(q turn.Query) packets.Reader { return t.Registry.Reader(q.Caller("")) }

// reader is the reader q carries, else the one its caller resolves to.
func (t Turns) reader(q turn.Query, c packets.Caller) packets.Reader {
	if q.Reader != nil {
		return *q.Reader
	}
	return t.Registry.Reader(c)
}

// Call runs one of the model's calls as q's caller. A tool's own failure
// is a result with IsError, which the model reads; it never fails the turn.
func (t Turns) Call(ctx context.Context, q turn.Query, call llm.ToolCall) turn.ToolResult {
	c := q.Caller(call.ID)
	o := t.Registry.CallAs(ctx, t.reader(q, c), c, call.Name, json.RawMessage(call.Arguments))
	if t.Count != nil {
		t.Count(call.Name, string(o.Decision))
	}
	return turn.ToolResult{Text: o.Text(), IsError: o.Failed(), Quiet: o.Report, Transient: o.Transient}
}
