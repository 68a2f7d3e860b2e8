package limitproc

import (
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
)

func TestChain(t *testing.T) {
	c, err := New(config.Limits{Name: "cyan", MaxOutputChars: 10, Forbidden: []string{`sk-[a-z0-9]+`}, MessagesPerMinute: 3,
		DenyTools: []string{"delete_*"}, ToolCallsPerMinute: 2, TokenBudgets: map[string]int{"main-virtual": 100}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Speaker() != "cyan-limit" || strings.Join(c.Stages(), ",") != "forbidden,output_length,message_rate,tool_gate,tool_rate,token_budget" {
		t.Fatal(c.Speaker(), c.Stages())
	}
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	turn := Turn{Channel: "c", Now: now}
	// Invisible when nothing fires.
	if parts, notes := c.Output(turn, []string{"hi"}); len(notes) != 0 || parts[0] != "hi" {
		t.Fatal(parts, notes)
	}
	parts, notes := c.Output(turn, []string{"key sk-abc", "0123456789abc"})
	if len(notes) != 2 || notes[0].Stage != "forbidden" || notes[1].Stage != "output_length" || parts[0] != "key [remo…" || len(parts) != 1 {
		t.Fatalf("%q %+v", parts, notes)
	}
	parts, notes = c.Output(turn, []string{"a", "b", "c"})
	if len(parts) != 1 || len(notes) != 1 || notes[0].Stage != "message_rate" {
		t.Fatalf("rate: %q %+v", parts, notes)
	}
	if parts, _ := c.Output(Turn{Channel: "c", Now: now.Add(time.Minute)}, []string{"a"}); len(parts) != 1 {
		t.Fatal("the window did not slide")
	}
	if r, n := c.Call(turn, "delete_all"); !strings.Contains(r, "deny_tools") || n[0].Stage != "tool_gate" {
		t.Fatal(r, n)
	}
	c.Call(turn, "a")
	c.Call(turn, "b")
	if r, _ := c.Call(turn, "c"); !strings.Contains(r, "2 tool calls a minute") {
		t.Fatal("tool rate:", r)
	}
	later := Turn{Channel: "d", Now: now}
	if n := c.Spend(later, 60); len(n) != 0 {
		t.Fatal(n)
	}
	if n := c.Spend(later, 60); len(n) != 1 || !strings.Contains(n[0].Text, "120 tokens") {
		t.Fatal(n)
	}
	if r, _ := c.Call(later, "x"); !strings.Contains(r, "token budget") {
		t.Fatal("budget does not hold calls:", r)
	}
	if r, _ := c.Call(Turn{Channel: "d", Now: now.Add(61 * time.Minute)}, "x"); r != "" {
		t.Fatal("budget did not recover:", r)
	}
	if _, err := New(config.Limits{Forbidden: []string{"("}}); err == nil {
		t.Fatal("bad pattern accepted")
	}
}

// A turn beyond the channel's messages per minute is refused before the
// model is asked, with the wait until the oldest message leaves the
// window.
func TestAdmitRefusesTurnsOverTheMessageRate(t *testing.T) {
	c, err := New(config.Limits{Name: "cyan", MessagesPerMinute: 2})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	turn := func(at time.Time) Turn { return Turn{Channel: "home", Now: at} }
	if w, _ := c.Admit(turn(t0)); w != 0 {
		t.Fatalf("an empty window waits %v", w)
	}
	c.Output(turn(t0), []string{"one"})
	c.Output(turn(t0.Add(10*time.Second)), []string{"two"})
	w, reason := c.Admit(turn(t0.Add(20 * time.Second)))
	if w != 40*time.Second || !strings.Contains(reason, "messages_per_minute") || !strings.Contains(reason, "40s") {
		t.Fatalf("Admit = %v %q, want 40s", w, reason)
	}
	if w, _ := c.Admit(Turn{Channel: "other", Now: t0.Add(20 * time.Second)}); w != 0 {
		t.Fatalf("another channel waits %v", w)
	}
	if w, _ := c.Admit(turn(t0.Add(61 * time.Second))); w != 0 {
		t.Fatalf("after the minute it still waits %v", w)
	}
}
