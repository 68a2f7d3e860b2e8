package limitproc

import (
	"time"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/turn"
)

// Turns is the chain as main-virtual's turns meet it: each check made for
// the turn's channel and speaker as main-virtual, at the clock's now, and
// each notice signed by the chain's speaker ("<system name>-limit").
type Turns struct {
	Chain *Chain
	Now   func() time.Time
}

func (t Turns) turn(q turn.Query) Turn {
	return Turn{Channel: q.Channel, Speaker: q.Speaker, Process: turn.Process, Now: t.Now()}
}

func (t Turns) notices(ns []Notice) []turn.LimitNotice {
	var out []turn.LimitNotice
	for _, n := range ns {
		out = append(out, turn.LimitNotice{From: t.Chain.Speaker(), Text: n.Text})
	}
	return out
}

// Output polices one model output's messages and what the call spent.
func (t Turns) Output(q turn.Query, parts []string, usage llm.Usage) ([]string, []turn.LimitNotice) {
	tt := t.turn(q)
	parts, ns := t.Chain.Output(tt, parts)
	ns = append(ns, t.Chain.Spend(tt, usage.InputTokens+usage.OutputTokens)...)
	return parts, t.notices(ns)
}

// Admit is asked before a turn calls the model.
func (t Turns) Admit(q turn.Query) (time.Duration, string) { return t.Chain.Admit(t.turn(q)) }

// ToolCall is asked before each tool call of the turn.
func (t Turns) ToolCall(q turn.Query, call llm.ToolCall) (string, []turn.LimitNotice) {
	r, ns := t.Chain.Call(t.turn(q), call.Name)
	return r, t.notices(ns)
}

// Stream is the holdback for one model output of the turn: its text is
// policed as it is written, and the messages it may still send this
// minute are counted (turn.TextLimit).
func (t Turns) Stream(q turn.Query) turn.TextLimit {
	h := t.Chain.Holdback()
	h.parts = t.Chain.Parts(t.turn(q))
	return h
}

// Finish polices the messages a Stream released through the rest of the
// chain (the message rate) and counts what the call spent; the
// holdback's own notices come first.
func (t Turns) Finish(q turn.Query, l turn.TextLimit, parts []string, usage llm.Usage) ([]string, []turn.LimitNotice) {
	tt := t.turn(q)
	h, _ := l.(*Holdback)
	if h == nil {
		h = &Holdback{parts: -1}
	}
	parts, ns := t.Chain.Finish(tt, h, parts)
	ns = append(ns, t.Chain.Spend(tt, usage.InputTokens+usage.OutputTokens)...)
	return parts, t.notices(ns)
}
