package daemon

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// The README's default path — Ollama, qwen3:8b and cyan's defaults — on
// the Ollama replica at its small-GPU default window of 4096 tokens: the
// daemon reads the window and fits every turn to it, so the server cuts
// nothing, from a fresh first turn to a turn after 200 messages. The
// prompt's size by part is logged (go test -run TestPromptSizeByPart -v).
func TestPromptSizeByPart(t *testing.T) {
	var table []string
	for _, window := range []int{llm.OllamaDefaultNumCtx, 16384} {
		table = append(table, promptSizes(t, window)...)
	}
	t.Logf("prompt by part (tokens; o200k for cyan's count, four bytes a token for the replica's)\n%s", strings.Join(table, "\n"))
}

// promptSizes runs a fresh first turn and a turn after 200 messages on
// the Ollama replica with window (4096: not loaded, Ollama's default;
// else loaded with OLLAMA_CONTEXT_LENGTH), and returns their table rows.
func promptSizes(t *testing.T, window int) []string {
	fake := &llmtest.Server{Flavor: llmtest.Ollama, Window: window, ModelMax: 40960, Thinks: true, Loaded: window != llm.OllamaDefaultNumCtx,
		Models: []string{config.DefaultOpenAIModel}}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"CYAN_DATA_DIR": dir, "CYAN_ADDR": "127.0.0.1:0", "CYAN_LLM_BASE_URL": srv.URL + "/v1"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer d.store.Close()
	turnOn := func(text string) (*turn.Result, llmtest.Request) {
		t.Helper()
		fake.Reset()
		res, err := d.mv.Turn(context.Background(), turn.Incoming{Channel: "home", User: "me", Text: text}, turn.Listener{})
		if err != nil {
			t.Fatal(err)
		}
		var chat llmtest.Request
		for _, q := range fake.Requests() {
			if strings.HasSuffix(q.Path, "/chat/completions") && len(q.Tools) > 0 {
				chat = q
				break
			}
		}
		if chat.Truncated != 0 || chat.PromptTokens > fake.Window {
			t.Fatalf("the server cut %d messages; prompt %d of %d tokens", chat.Truncated, chat.PromptTokens, fake.Window)
		}
		return res, chat
	}
	row := func(name string, res *turn.Result, chat llmtest.Request) string {
		pk := res.Trace.Packet
		parts := []string{}
		for _, st := range pk.Sections {
			if st.Tokens > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", st.Slot, st.Tokens))
			}
		}
		return fmt.Sprintf("| %d | %s | %s | %d | %d (%d messages) | %d | %d |", window, name, strings.Join(parts, ", "), pk.ToolTokens,
			pk.Context.Tokens, len(pk.Context.Included), pk.Tokens, chat.PromptTokens)
	}
	first, chat := turnOn("hello, who are you?")
	if first.Trace.Packet.Window == nil || first.Trace.Packet.Window.Tokens != window {
		t.Fatalf("window = %+v", first.Trace.Packet.Window)
	}
	var lines []string
	if window == llm.OllamaDefaultNumCtx {
		lines = []string{"| window | turn | system sections | tools | conversation | cyan's count | the replica's count |", "|---|---|---|---|---|---|---|"}
	}
	lines = append(lines, row("fresh first turn", first, chat))

	now := time.Now()
	for i := range 200 {
		m := &store.Message{Channel: "home", Role: store.RoleUser, User: "me", Kind: turn.KindPrivate,
			Text: fmt.Sprintf("message %d: we talked about the garden, the weather and what to cook tonight, at some length as friends do", i)}
		if i%2 == 1 {
			m.Role, m.User = store.RoleAssistant, d.mv.AgentName()
		}
		if err := d.store.Append(now.Add(time.Duration(i)*time.Second), m); err != nil {
			t.Fatal(err)
		}
	}
	later, chat := turnOn("what did we say about the garden?")
	lines = append(lines, row("after 200 messages", later, chat))
	if len(later.Trace.Packet.Context.Dropped) == 0 || window == llm.OllamaDefaultNumCtx && !strings.Contains(later.Trace.Packet.Context.Note, "window") {
		t.Errorf("the trace does not say what left: %+v", later.Trace.Packet.Context)
	}
	return lines
}
