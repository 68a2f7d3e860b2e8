package observer

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/store"
)

// The prompt scripts observers decide with (built in; a persona's scripts/
// folder may override each).
const (
	// ScriptDecide runs a persona observer's prompt: as its instruction.
	ScriptDecide = "observer_decide"
	// ScriptSpeech is main-observer's self-decided speech.
	ScriptSpeech = "observer_speech"
)

// Scripts runs a prompt script with structured inputs and decodes its
// validated value into out (the script library's Call).
type Scripts interface {
	Call(ctx context.Context, name, channel string, in map[string]any, out any) error
}

// RecentLine is one message of a channel's recent conversation, as an
// observer's script reads it (its "messages" input).
type RecentLine struct {
	Time    string `json:"time"`
	Speaker string `json:"speaker"`
	Role    string `json:"role"`
	Text    string `json:"text"`
}

// Decider is the speech decision: whether an observer should have the
// companion speak first in a channel now. A prompt script reads the
// channel's recent conversation — the last 20 messages people and the
// companion said, as "conversation" text and "messages" lines — with the
// observer's name, the channel, the time, the agent's name and (when the
// observer has one) its instruction, and answers {speak, note}. It speaks
// only when it says so with a note of what to bring up.
type Decider struct {
	Scripts   Scripts
	Store     *store.Store
	AgentName func() string    // nil: left to the script's default
	Now       func() time.Time // nil: time.Now
}

// Decide runs script for observer in channel.
func (d Decider) Decide(ctx context.Context, observer, script, instruction, channel string) (speak bool, note string, err error) {
	recent, err := d.Store.Recent(channel, store.Window{Limit: 20, MaxScan: 200, Keep: func(m *store.Message) bool { return m.Text != "" && m.Role != store.RoleTool && !m.IsRecalled() }})
	if err != nil {
		return false, "", err
	}
	var b strings.Builder
	lines := make([]RecentLine, 0, len(recent))
	for _, m := range recent {
		l := RecentLine{Time: m.Time.Format("01-02 15:04"), Speaker: m.User, Role: string(m.Role), Text: m.Text}
		if l.Speaker == "" {
			l.Speaker = string(m.Role)
		}
		lines = append(lines, l)
		fmt.Fprintf(&b, "[%s] %s: %s\n", l.Time, l.Speaker, strings.ReplaceAll(l.Text, "\n", " "))
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	in := map[string]any{"observer": observer, "channel": channel, "now": now().Format("2006-01-02 15:04"),
		"conversation": strings.TrimRight(b.String(), "\n"), "messages": lines}
	if instruction != "" {
		in["instruction"] = instruction
	}
	if d.AgentName != nil {
		if n := strings.TrimSpace(d.AgentName()); n != "" {
			in["agent_name"] = n
		}
	}
	var out struct {
		Speak bool   `json:"speak"`
		Note  string `json:"note"`
	}
	if err := d.Scripts.Call(ctx, script, channel, in, &out); err != nil {
		return false, "", err
	}
	return out.Speak && strings.TrimSpace(out.Note) != "", out.Note, nil
}

// SpeechNote is the platform's note that wakes main-virtual to speak first
// on an observer's suggestion; it may still choose silence.
func SpeechNote(observer, note string) string {
	return fmt.Sprintf("Observer %s suggests you speak first: %s (You may also stay silent with <empty_reply>.)", observer, note)
}

// PlanDueNote is the platform's note that wakes main-virtual in a plan's
// conversation when the plan is due.
func PlanDueNote(p memory.Plan) string {
	note := fmt.Sprintf("Plan %s is due now (%s): %s", p.ID, p.When(), p.Text)
	for _, d := range p.Details {
		note += "\n- " + d
	}
	return note + "\nIf it calls for it, say something now; mark the plan complete with the plan tool when it is done."
}
