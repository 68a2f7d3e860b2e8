package mainvirtual

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// newRigOn is newRig on a given fake (a replica), with its client.
func newRigOn(t *testing.T, fake *llmtest.Server, mutate func(*Options, llm.Client)) *rig {
	t.Helper()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	client, err := llm.New(llm.Options{BaseURL: srv.URL + "/v1", Model: "qwen3:8b", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := persona.Default()
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Date(2026, 11, 22, 10, 31, 0, 0, time.UTC)}
	o := Options{Store: st, LLM: client, Persona: func() *persona.Persona { return p }, Agent: config.Defaults().Agent, Now: clk.now}
	if mutate != nil {
		mutate(&o, client)
	}
	mv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{mv: mv, store: st, fake: fake, clock: clk}
}

// manyTools offers tools whose schemas weigh about what cyan's built-in
// tools do (8.7 KB of JSON).
type manyTools struct{}

func (manyTools) Offer(turn.Query) []llm.Tool {
	var out []llm.Tool
	for i := range 12 {
		out = append(out, llm.Tool{Name: fmt.Sprintf("tool_%d", i),
			Description: strings.Repeat("Does one thing of the agent's work, described at the length real tools are. ", 6),
			Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what the tool works on"},"count":{"type":"integer"}},"required":["text"]}`)})
	}
	return out
}

func (manyTools) Call(_ context.Context, _ turn.Query, c llm.ToolCall) turn.ToolResult {
	return turn.ToolResult{Text: "done"}
}

// seed stores n alternating messages of about 40 tokens in channel home.
func seed(t *testing.T, r *rig, n int) {
	t.Helper()
	for i := range n {
		m := &store.Message{Channel: "home", Role: store.RoleUser, User: "alice", Kind: turn.KindPrivate,
			Text: fmt.Sprintf("message %d: we talked about the garden, the weather and what to cook tonight, at some length as friends do", i)}
		if i%2 == 1 {
			m.Role, m.User = store.RoleAssistant, "Cyan"
		}
		if err := r.store.Append(r.clock.now(), m); err != nil {
			t.Fatal(err)
		}
		r.clock.add(time.Second)
	}
}

// Ollama on a small GPU runs qwen3:8b with a 4096-token window and cuts a
// longer prompt without a word. cyan reads the window and fits the prompt
// itself: nothing is cut by the server, and the trace says what left.
func TestOllama4096WindowLongConversation(t *testing.T) {
	fake := &llmtest.Server{Flavor: llmtest.Ollama, Window: llm.OllamaDefaultNumCtx, ModelMax: 40960, Models: []string{"qwen3:8b"}}
	r := newRigOn(t, fake, func(o *Options, c llm.Client) {
		o.Tools = manyTools{}
		o.Window = func(ctx context.Context) llm.Window { w, _ := llm.ProbeWindow(ctx, c, ""); return w }
	})
	seed(t, r, 200)
	res := r.turn(t, "alice", "what did we say about the garden?")
	reqs := r.fake.Requests()
	var chat llmtest.Request
	for _, q := range reqs {
		if strings.HasSuffix(q.Path, "/chat/completions") {
			chat = q
		}
	}
	if chat.Truncated != 0 {
		t.Fatalf("the server cut %d messages silently (prompt %d tokens of %d)", chat.Truncated, chat.PromptTokens, fake.Window)
	}
	if chat.PromptTokens > fake.Window {
		t.Fatalf("prompt %d tokens, window %d", chat.PromptTokens, fake.Window)
	}
	last := chat.Messages[len(chat.Messages)-1]
	if !strings.Contains(last.Content, "what did we say about the garden?") {
		t.Errorf("the incoming message is not last: %q", last.Content)
	}
	pk := res.Trace.Packet
	if pk.Window == nil || pk.Window.Tokens != 4096 || pk.Window.Context >= config.Defaults().Agent.ContextBudget {
		t.Fatalf("window trace = %+v", pk.Window)
	}
	if len(pk.Context.Dropped) == 0 || !strings.Contains(pk.Context.Note, "not agent.context_budget's 6000") || !strings.Contains(pk.Window.Note, "window of 4096") {
		t.Errorf("the trace does not say what left: dropped %d, note %q, window note %q", len(pk.Context.Dropped), pk.Context.Note, pk.Window.Note)
	}
	if pk.ToolTokens == 0 || pk.Tokens > pk.Window.Limit {
		t.Errorf("tools %d tokens, packet %d of limit %d", pk.ToolTokens, pk.Tokens, pk.Window.Limit)
	}
	t.Logf("prompt by part after 200 messages, window 4096: system %d, tools %d, conversation %d (%d messages, %d dropped); the replica counted %d",
		pk.SystemTokens, pk.ToolTokens, pk.Context.Tokens, len(pk.Context.Included), len(pk.Context.Dropped), chat.PromptTokens)
}

// A window too small even for the system prompt, the tools and a little
// conversation: the pulled info gives way, then the lorebook, and the
// trace names them.
func TestWindowLeavesPulledInfoOut(t *testing.T) {
	pulled := turn.SourceFunc(func(_ context.Context, _ turn.Query, budget int, _ func(string) int) (turn.Section, error) {
		return turn.Section{Body: strings.Repeat("a pulled file's line of text\n", 60)}, nil
	})
	fake := &llmtest.Server{Flavor: llmtest.Ollama, Window: 4096, Models: []string{"qwen3:8b"}}
	r := newRigOn(t, fake, func(o *Options, c llm.Client) {
		o.Tools = manyTools{}
		o.Sources = map[turn.Slot]turn.Source{turn.SlotPulled: pulled}
		o.Window = func(context.Context) llm.Window { return llm.Window{Tokens: 3600, Source: "test"} }
	})
	res := r.turn(t, "alice", "hello")
	pk := res.Trace.Packet
	if pk.Window == nil || len(pk.Window.Left) == 0 || pk.Window.Left[0] != turn.SlotPulled {
		t.Fatalf("window trace = %+v", pk.Window)
	}
	if strings.Contains(lastRequest(t, r.fake).Messages[0].Content, "a pulled file's line") {
		t.Error("the pulled info was sent")
	}
	for _, st := range pk.Sections {
		if st.Slot == turn.SlotPulled && !strings.Contains(st.Note, "left out") {
			t.Errorf("the pulled section's trace: %+v", st)
		}
	}
}

// llama.cpp answers a prompt over its n_ctx with a 400 that states both
// counts. The turn assembles again within them and retries once, and
// later turns fit the window the error taught without failing first.
func TestContextOverflowRecovered(t *testing.T) {
	fake := &llmtest.Server{Flavor: llmtest.LlamaCpp, Window: 4500, Models: []string{"qwen3:8b"}}
	r := newRigOn(t, fake, func(o *Options, _ llm.Client) { o.Tools = manyTools{} })
	seed(t, r, 200)
	res := r.turn(t, "alice", "and the garden?")
	if len(res.Replies) != 1 || res.Err != nil {
		t.Fatalf("replies %v, err %v", replyTexts(res.Replies), res.Err)
	}
	reqs := r.fake.Requests()
	if len(reqs) != 2 || reqs[1].PromptTokens > fake.Window {
		t.Fatalf("%d requests; the retry's prompt %d tokens", len(reqs), reqs[len(reqs)-1].PromptTokens)
	}
	st := res.Trace.Steps[0]
	if !strings.Contains(st.Error, "exceeds the available context size") || !strings.Contains(st.Note, "assembled again") {
		t.Errorf("step trace: %+v", st)
	}
	if !strings.Contains(st.Error, "-c 16384") || strings.Contains(st.Error, "JSON schema") {
		t.Errorf("the advice does not match the error: %s", st.Error)
	}
	r.fake.Reset()
	r.turn(t, "alice", "and then?")
	if reqs := r.fake.Requests(); len(reqs) != 1 {
		t.Errorf("the next turn failed first again: %d requests", len(reqs))
	}
}
