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
