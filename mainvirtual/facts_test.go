package mainvirtual

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/turn"
)

// renamed is a client that names another model: the same server, another
// Describe.
type renamed struct {
	llm.Client
	name string
}

func (r renamed) Describe() string { return r.name }

// restart builds another MainVirtual over r's store with client: what a
// restarted daemon does.
func restart(t *testing.T, r *rig, client llm.Client, mutate func(*Options)) *MainVirtual {
	t.Helper()
	p, err := persona.Default()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Store: r.store, LLM: client, Persona: func() *persona.Persona { return p }, Agent: config.Defaults().Agent, Now: r.clock.now}
	if mutate != nil {
		mutate(&o)
	}
	mv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return mv
}

// liveTurn runs a turn in channel home and returns what its stream showed.
func liveTurn(t *testing.T, mv *MainVirtual, text string) (live string, res *turn.Result) {
	t.Helper()
	var b strings.Builder
	res, err := mv.Turn(context.Background(), turn.Incoming{Channel: "home", User: "alice", Text: text},
		turn.Listener{Stream: func(e turn.StreamEvent) error { b.WriteString(e.Text); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), res
}

// factVersion is the version of a fact's key in r's store (0: none).
func factVersion(t *testing.T, r *rig, client llm.Client, name string) uint64 {
	t.Helper()
	f := &facts{store: r.store, model: client.Describe()}
	var v uint64
	err := r.store.DB().View(func(txn *badger.Txn) error {
		it, err := txn.Get(f.key(name))
		if err == nil {
			v = it.Version()
		}
		return err
	})
	if err != nil && err != badger.ErrKeyNotFound {
		t.Fatal(err)
	}
	return v
}

// liveEvents runs a turn and returns its live text as the listener got
// it, one string an event.
func liveEvents(t *testing.T, mv *MainVirtual, text string) []string {
	t.Helper()
	var evs []string
	_, err := mv.Turn(context.Background(), turn.Incoming{Channel: "home", User: "alice", Text: text},
		turn.Listener{Stream: func(e turn.StreamEvent) error {
			if e.Text != "" {
				evs = append(evs, e.Text)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// A model behind vLLM without a reasoning parser writes its reasoning, a
// bare "</think>", then the answer. The first answer of a model never
// used before is held whole, so its reasoning is never shown live; the
// bare "</think>" is kept, and after a restart the same model's answers
// are held until it too. Another model at the same server starts
// unknown.
func TestThinksIsKeptAcrossARestart(t *testing.T) {
	var client llm.Client
	r := newRig(t, func(o *Options) { client = o.LLM })
	const reasoning = "Okay, the user says hi. I should greet back."
	r.fake.Enqueue(llmtest.Reply{Server: llmtest.VLLM, Reasoning: reasoning, Text: "Hi! Nice to see you.", ChunkSize: 3})
	live, res := liveTurn(t, r.mv, "hi")
	if live != "Hi! Nice to see you." {
		t.Fatalf("the first answer of an unknown model showed live %q, want only its answer", live)
	}
	if got := replyTexts(res.Replies); len(got) != 1 || got[0] != "Hi! Nice to see you." {
		t.Fatalf("stored %q", got)
	}

	stored := factVersion(t, r, client, factThinks)
	if stored == 0 {
		t.Fatal("the bare </think> was not stored")
	}
	mv := restart(t, r, client, nil)
	r.fake.Enqueue(llmtest.Reply{Server: llmtest.VLLM, Reasoning: reasoning, Text: "Hello again.", ChunkSize: 3})
	live, res = liveTurn(t, mv, "hi again")
	if v := factVersion(t, r, client, factThinks); v != stored {
		t.Errorf("a fact already known was written again (version %d, then %d)", stored, v)
	}
	if strings.Contains(live, "greet back") || strings.Contains(live, "</think>") {
		t.Fatalf("after a restart the first answer streamed its reasoning: %q", live)
	}
	if live != "Hello again." || len(res.Replies) != 1 || res.Replies[0].Text != live {
		t.Errorf("live %q, stored %q", live, replyTexts(res.Replies))
	}
	// An answer without reasoning does not make it plain again.
	r.fake.Enqueue(llmtest.Reply{Text: "Sure.", ChunkSize: 3})
	liveTurn(t, mv, "ok?")
	if !restart(t, r, client, nil).expectThink() {
		t.Error("an answer without a bare </think> undid the fact")
	}

	other := renamed{client, strings.Replace(client.Describe(), "fake-model", "other-model", 1)}
	mv = restart(t, r, other, nil)
	if mv.thinks.Load() || mv.plain.Load() {
		t.Fatal("another model inherited the first one's fact")
	}
	r.fake.Enqueue(llmtest.Reply{Server: llmtest.VLLM, Reasoning: reasoning, Text: "Hi.", ChunkSize: 3})
	if live, _ = liveTurn(t, mv, "and you?"); live != "Hi." {
		t.Errorf("another model's first answer showed live %q", live)
	}
}

// A model whose first answer has no bare "</think>" is known not to
// open its reasoning: that answer arrived whole, the next ones stream as
// they come, after a restart too.
func TestAPlainModelStreamsAfterItsFirstAnswer(t *testing.T) {
	var client llm.Client
	r := newRig(t, func(o *Options) { client = o.LLM })
	if !r.mv.expectThink() {
		t.Fatal("a model never used is not held")
	}
	const answer = "Good morning! The kettle is on and the sun is out."
	r.fake.Enqueue(llmtest.Reply{Text: answer, ChunkSize: 4})
	if evs := liveEvents(t, r.mv, "morning"); strings.Join(evs, "") != answer || len(evs) != 1 {
		t.Fatalf("the first answer came live as %q, want it whole in one piece", evs)
	}
	if factVersion(t, r, client, factThinks) == 0 {
		t.Fatal("that the model does not think was not stored")
	}
	r.fake.Enqueue(llmtest.Reply{Text: answer, ChunkSize: 4})
	if evs := liveEvents(t, r.mv, "and now?"); strings.Join(evs, "") != answer || len(evs) < 2 {
		t.Fatalf("the second answer came live as %q, want it as it was written", evs)
	}
	mv := restart(t, r, client, nil)
	r.fake.Enqueue(llmtest.Reply{Text: answer, ChunkSize: 4})
	if evs := liveEvents(t, mv, "after the restart?"); strings.Join(evs, "") != answer || len(evs) < 2 {
		t.Fatalf("after a restart the answer came live as %q, want it as it was written", evs)
	}
}

// The window a server's context-length error stated is kept: a
// restarted MainVirtual fits its first turn to it, and the server never
// sees an over-long prompt again.
func TestLearnedWindowIsKeptAcrossARestart(t *testing.T) {
	fake := &llmtest.Server{Flavor: llmtest.LlamaCpp, Window: 4500, Models: []string{"qwen3:8b"}}
	var client llm.Client
	r := newRigOn(t, fake, func(o *Options, c llm.Client) { o.Tools = manyTools{}; client = c })
	seed(t, r, 200)
	r.turn(t, "alice", "and the garden?")
	if reqs := fake.Requests(); len(reqs) != 2 {
		t.Fatalf("the first turn made %d requests; want a refused one and its retry", len(reqs))
	}

	fake.Reset()
	mv := restart(t, r, client, func(o *Options) { o.Tools = manyTools{} })
	res, err := mv.Turn(context.Background(), turn.Incoming{Channel: "home", User: "alice", Text: "and then?"}, turn.Listener{})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].PromptTokens > fake.Window {
		t.Fatalf("after a restart: %d requests, the first of %d tokens (window %d)", len(reqs), reqs[0].PromptTokens, fake.Window)
	}
	if w := res.Trace.Packet.Window; w == nil || w.Tokens != fake.Window || !strings.Contains(w.Source, "context-length error") {
		t.Errorf("window trace %+v", w)
	}

	// Another model at the same server starts unknown.
	other := renamed{client, strings.Replace(client.Describe(), "qwen3:8b", "qwen3:32b", 1)}
	if w := restart(t, r, other, nil).asm.serverWindow(context.Background()); w.tokens != 0 {
		t.Errorf("another model inherited the window: %+v", w)
	}
}

// A learned window holds while the window function says what it said
// when the error came; once it says another (the owner raised the
// server's window), the learned one is forgotten, in the store too.
func TestLearnedWindowForgottenWhenTheServerChanges(t *testing.T) {
	said := 0
	var client llm.Client
	window := func(context.Context) llm.Window { return llm.Window{Tokens: said, Source: "test"} }
	r := newRig(t, func(o *Options) { o.Window = window; client = o.LLM })
	ctx := context.Background()
	r.mv.asm.serverWindow(ctx)
	r.mv.asm.learn(4000)
	if w := restart(t, r, client, func(o *Options) { o.Window = window }).asm.serverWindow(ctx); w.tokens != 4000 {
		t.Fatalf("kept window %+v", w)
	}
	said = 32768
	mv := restart(t, r, client, func(o *Options) { o.Window = window })
	if w := mv.asm.serverWindow(ctx); w.tokens != 32768 || w.source != "test" {
		t.Fatalf("the server now says 32768, the window used is %+v", w)
	}
	said = 0 // the server says nothing for a while: nothing comes back
	if w := restart(t, r, client, func(o *Options) { o.Window = window }).asm.serverWindow(ctx); w.tokens != 0 {
		t.Fatalf("a forgotten window came back: %+v", w)
	}
	// Learned while the server says 32768, it holds while it says so, and
	// while it only assumes a window (an Ollama model not loaded).
	said = 32768
	mv.asm.learn(16000)
	if w := restart(t, r, client, func(o *Options) { o.Window = window }).asm.serverWindow(ctx); w.tokens != 16000 {
		t.Fatalf("kept window %+v", w)
	}
	assumed := func(context.Context) llm.Window { return llm.Window{Tokens: 65536, Source: "test", Assumed: true} }
	if w := restart(t, r, client, func(o *Options) { o.Window = assumed }).asm.serverWindow(ctx); w.tokens != 16000 {
		t.Fatalf("an assumed window made the learned one forgotten: %+v", w)
	}
	if w := restart(t, r, client, func(o *Options) { o.Window = window }).asm.serverWindow(ctx); w.tokens != 16000 {
		t.Fatalf("kept window %+v", w)
	}
}

// A stored fact that cannot be read is ignored: the model starts unknown.
func TestUnreadableFactsAreIgnored(t *testing.T) {
	var client llm.Client
	r := newRig(t, func(o *Options) { client = o.LLM })
	f := &facts{store: r.store, model: client.Describe(), log: slog.New(slog.DiscardHandler)}
	for name, v := range map[string]string{factThinks: "maybe", factWindow: `{"tokens":-3}`} {
		if err := r.store.DB().Update(func(txn *badger.Txn) error { return txn.Set(f.key(name), []byte(v)) }); err != nil {
			t.Fatal(err)
		}
	}
	mv := restart(t, r, client, nil)
	if mv.thinks.Load() || mv.plain.Load() || mv.asm.serverWindow(context.Background()).tokens != 0 {
		t.Fatal("an unreadable fact was taken")
	}
	r.fake.Enqueue(llmtest.Reply{Text: "fine"})
	if _, res := liveTurn(t, mv, "hi"); len(res.Replies) != 1 {
		t.Fatalf("replies %q", replyTexts(res.Replies))
	}
}
