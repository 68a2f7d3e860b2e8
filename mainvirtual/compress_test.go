package mainvirtual

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// shortener is a Compressor that keeps the first word of a message and
// counts how often each message (each text: the tests' are distinct) was compressed.
type shortener struct {
	mu    sync.Mutex
	calls map[string]int
	fail  bool
}

func (s *shortener) Compress(_ context.Context, _, text, _ string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[text]++
	if s.fail {
		return "", "", errors.New("the model is down")
	}
	first := strings.Fields(text)[0]
	return "said " + first + "\n(short)", "trace-" + first, nil
}

func compressRig(t *testing.T, c Compressor, budget, mini int) *rig {
	t.Helper()
	p, err := persona.Default()
	if err != nil {
		t.Fatal(err)
	}
	p.MiniFullContextCount = mini
	return newRig(t, func(o *Options) {
		o.Agent.ContextBudget = budget
		o.Compressor = c
		o.Persona = func() *persona.Persona { return p }
	})
}

func TestCompressionKeepsTheContextInBudget(t *testing.T) {
	c := new(shortener)
	r := compressRig(t, c, 700, 2)
	long := strings.Repeat("blah ", 60)
	var replies []string
	for i := range 14 {
		reply := fmt.Sprintf("reply%d %s", i, long)
		replies = append(replies, reply)
		r.fake.Enqueue(llmtest.Reply{Text: reply})
		r.turn(t, "alice", fmt.Sprintf("question %d", i))

		tr, _ := r.mv.LastTrace("home")
		ct := tr.Packet.Context
		if ct.Tokens > ct.Budget {
			t.Fatalf("turn %d: context %d tokens over its budget %d", i, ct.Tokens, ct.Budget)
		}
		if ct.MiniFull != 2 {
			t.Errorf("mini_full = %d", ct.MiniFull)
		}
		req := lastRequest(t, r.fake)
		sent := ""
		for _, m := range req.Messages[1:] {
			sent += m.Content + "\n"
		}
		// Every included user message is sent whole.
		compressed := map[string]bool{}
		for _, it := range ct.Compressed {
			compressed[it.ID] = true
			m, err := r.store.Get(it.ID)
			if err != nil {
				t.Fatal(err)
			}
			if it.CompressedTokens >= it.Tokens || it.TraceID != "trace-"+strings.Fields(m.Text)[0] {
				t.Errorf("turn %d: compressed item %+v", i, it)
			}
		}
		var models []*store.Message
		for _, id := range ct.Included {
			m, err := r.store.Get(id)
			if err != nil {
				t.Fatal(err)
			}
			if m.Role == store.RoleUser {
				if compressed[id] || !strings.Contains(sent, m.Text) {
					t.Errorf("turn %d: user message %q was not sent whole", i, m.Text)
				}
			}
			if m.Role == store.RoleAssistant {
				models = append(models, m)
			}
		}
		// The newest mini model messages are never compressed.
		for _, m := range models[max(0, len(models)-2):] {
			if compressed[m.ID] || !strings.Contains(sent, m.Text) {
				t.Errorf("turn %d: one of the last 2 model messages was compressed: %q", i, m.Text[:12])
			}
		}
		if i == 13 {
			if len(ct.Compressed) == 0 || !strings.Contains(sent, compressedMark+"said reply") {
				t.Errorf("nothing compressed at the end: %+v", ct)
			}
			if strings.Contains(sent, "\n(short)") {
				t.Error("a compressed form is one line")
			}
			if !slices.ContainsFunc(ct.Compressed, func(it turn.CompressedItem) bool { return it.Cached }) {
				t.Error("forms from earlier turns are reused")
			}
		}
	}
	for id, n := range c.calls {
		if n != 1 {
			t.Errorf("message %s compressed %d times", id, n)
		}
	}
}

func TestCompressionBoundAndFailures(t *testing.T) {
	c := new(shortener)
	r := compressRig(t, nil, 100000, 1)
	long := strings.Repeat("blah ", 200)
	for i := range 8 {
		r.fake.Enqueue(llmtest.Reply{Text: fmt.Sprintf("reply%d %s", i, long)})
		r.turn(t, "alice", fmt.Sprintf("question %d", i))
	}
	// A small budget now: many candidates, a bound of 2 per turn.
	r.mv.asm.context = 600
	r.mv.asm.compressor = c
	r.mv.asm.compress.PerTurn = 2
	r.fake.Enqueue(llmtest.Reply{Text: "ok"})
	r.turn(t, "alice", "and now?")
	tr, _ := r.mv.LastTrace("home")
	ct := tr.Packet.Context
	if len(c.calls) != 2 || !strings.Contains(ct.Note, "compression bound reached: at most 2") {
		t.Errorf("calls %d note %q", len(c.calls), ct.Note)
	}
	if ct.Tokens > ct.Budget || len(ct.Dropped) == 0 || !strings.Contains(ct.Dropped[len(ct.Dropped)-1].Reason, "context budget") {
		t.Errorf("over-budget messages are dropped: %+v", ct)
	}
	// A failing compressor leaves the turn working and says why.
	c.fail = true
	r.fake.Enqueue(llmtest.Reply{Text: "still here"})
	res := r.turn(t, "alice", "hello?")
	if got := replyTexts(res.Replies); len(got) != 1 || got[0] != "still here" {
		t.Fatalf("replies %q", got)
	}
	tr, _ = r.mv.LastTrace("home")
	if !strings.Contains(tr.Packet.Context.Note, "the model is down") || tr.Packet.Context.Tokens > tr.Packet.Context.Budget {
		t.Errorf("note %q", tr.Packet.Context.Note)
	}
}

func TestNoCompressionWhenItFits(t *testing.T) {
	c := new(shortener)
	r := compressRig(t, c, 6000, 0)
	for i := range 4 {
		r.fake.Enqueue(llmtest.Reply{Text: fmt.Sprintf("reply %d %s", i, strings.Repeat("word ", 60))})
		r.turn(t, "alice", "hi")
	}
	tr, _ := r.mv.LastTrace("home")
	if len(c.calls) != 0 || len(tr.Packet.Context.Compressed) != 0 {
		t.Errorf("compressed though the context fits: %v", c.calls)
	}
}

// BenchmarkAssembleCompressed measures assembly when the context is over
// its budget and the older model messages show their kept compressed
// forms (the steady state of a long conversation: no new calls).
func BenchmarkAssembleCompressed(b *testing.B) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var count TokenCounter
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 2000 {
		role, text := store.RoleUser, fmt.Sprintf("question %d", i)
		if i%2 == 1 {
			role, text = store.RoleAssistant, fmt.Sprintf("answer %d %s", i, strings.Repeat("some chat words 你好 ", 40))
		}
		m := &store.Message{Channel: "bench", Role: role, User: "alice", Text: text, Tokens: count.Count(text)}
		if err := st.Append(t0.Add(time.Duration(i)*time.Second), m); err != nil {
			b.Fatal(err)
		}
		if role == store.RoleAssistant {
			if err := st.PutCompressed(m.ID, store.Compressed{Text: fmt.Sprintf("answered %d", i)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	p, _ := persona.Default()
	agent := config.Defaults().Agent
	agent.ContextBudget = 2000
	mv, err := New(Options{Store: st, LLM: nopClient{}, Persona: func() *persona.Persona { return p }, Agent: agent, Counter: &count, Compressor: new(shortener)})
	if err != nil {
		b.Fatal(err)
	}
	q := turn.Query{Channel: "bench", Speaker: "alice", Now: t0.Add(time.Hour)}
	pk, err := mv.asm.assemble(context.Background(), q, nil, 0)
	if err != nil || len(pk.Context.Compressed) == 0 || pk.Context.Tokens > agent.ContextBudget {
		b.Fatalf("assemble: %v %+v", err, pk.Context)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := mv.asm.assemble(context.Background(), q, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
}
