package limitproc

import (
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/turn"
)

// TestTurnsChecksAsMainVirtual: a turn's output, spending and tool calls
// are checked for its channel as main-virtual (its token budget), at the
// clock's time (a turn is admitted again a minute after its channel's
// message), and each notice is signed "<name>-limit".
func TestTurnsChecksAsMainVirtual(t *testing.T) {
	c, err := New(config.Limits{Name: "cyan", MaxOutputChars: 5, MessagesPerMinute: 1, DenyTools: []string{"delete_*"}, TokenBudgets: map[string]int{turn.Process: 100}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	lt := Turns{Chain: c, Now: func() time.Time { return now }}
	q := turn.Query{Channel: "c", Speaker: "alice"}
	parts, ns := lt.Output(q, []string{"0123456789"}, llm.Usage{InputTokens: 80, OutputTokens: 40})
	if len(parts) != 1 || len(parts[0]) > 5+len("…") || len(ns) != 2 {
		t.Fatalf("%q %+v", parts, ns)
	}
	for _, n := range ns {
		if n.From != "cyan-limit" || n.Text == "" {
			t.Errorf("notice %+v", n)
		}
	}
	if !strings.Contains(ns[1].Text, "120 tokens") {
		t.Errorf("the spend was not counted for main-virtual: %+v", ns[1])
	}
	if r, ns := lt.ToolCall(q, llm.ToolCall{Name: "delete_all"}); !strings.Contains(r, "deny_tools") || len(ns) != 1 || ns[0].From != "cyan-limit" {
		t.Fatalf("tool gate: %q %+v", r, ns)
	}
	if wait, why := lt.Admit(q); wait != time.Minute || !strings.Contains(why, "messages_per_minute") {
		t.Fatalf("the channel's message a minute did not hold its next turn: %v %q", wait, why)
	}
	if wait, _ := lt.Admit(turn.Query{Channel: "d"}); wait != 0 {
		t.Fatalf("another channel waits %v", wait)
	}
}
