package mainvirtual

import (
	"context"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/turn"
)

// TestA250KBMessageFitsTheBudget: a message larger than the whole context
// budget is stored whole, reaches the model cut to fit (the packet within
// budget), and the prompt and the trace say where the whole of it is.
func TestA250KBMessageFitsTheBudget(t *testing.T) {
	// A context budget of 1,000 tokens, not the default 6,000: the message
	// (99,200 tokens) is a hundred times over it, and the search for where
	// to cut counts prefixes of up to 16 bytes a token of the budget
	// (oversize.go), a sixth as much text here.
	r := newRig(t, func(o *Options) { o.Agent.ContextBudget = 1000 })
	r.turn(t, "ann", "first, a short one")
	line := "2026-11-23 10:31:07 INFO worker-3 flushed 4096 records to segment 00042 in 12ms\n"
	big := strings.Repeat(line, 250<<10/len(line))
	res, err := r.mv.Turn(context.Background(), turn.Incoming{Channel: "home", User: "ann", Text: big}, turn.Listener{})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := r.store.Get(res.Message.ID)
	if err != nil || stored.Text != big {
		t.Fatalf("the stored message is not whole: %d bytes of %d, %v", len(stored.Text), len(big), err)
	}
	ct := res.Trace.Packet.Context
	budget := ct.Budget
	if ct.Tokens > budget {
		t.Fatalf("the context is %d tokens, over its budget of %d", ct.Tokens, budget)
	}
	if len(ct.Cut) != 1 || ct.Cut[0].ID != res.Message.ID || ct.Cut[0].Tokens < 10*budget || ct.Cut[0].Shown > budget ||
		ct.Cut[0].Ref != "%[history/home/"+stored.Time.Format("2006-01-02")+"] message 3" {
		t.Fatalf("trace of the cut: %+v", ct.Cut)
	}
	reqs := r.fake.Requests()
	last := reqs[len(reqs)-1]
	var user llm.Message
	for _, m := range last.Messages {
		if m.Role == llm.RoleUser {
			user = m
		}
	}
	if n := r.mv.count.Count(user.Content); n > budget {
		t.Fatalf("the message the model got is %d tokens", n)
	}
	if !strings.Contains(user.Content, "worker-3 flushed") || !strings.Contains(user.Content, ct.Cut[0].Ref) || !strings.Contains(user.Content, "cut here") {
		t.Fatalf("the model's copy does not say where the rest is: …%s", user.Content[max(0, len(user.Content)-300):])
	}
	var all int
	for _, m := range last.Messages {
		all += r.mv.count.Count(m.Content)
	}
	t.Logf("packet: %d tokens in all (context %d of %d), message %d tokens", all, ct.Tokens, budget, ct.Cut[0].Tokens)
}
