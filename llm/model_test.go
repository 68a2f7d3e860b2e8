package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// replica serves a flavored fake and returns a client of it.
func replica(t *testing.T, srv *llmtest.Server, edit func(*llm.Options)) llm.Client {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	o := llm.Options{BaseURL: ts.URL + "/v1", Model: "qwen3:8b", MaxRetries: -1}
	if edit != nil {
		edit(&o)
	}
	c, err := llm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func longMessages(n int) []llm.Message {
	var out []llm.Message
	for i := range n {
		role := llm.RoleUser
		if i%2 == 1 {
			role = llm.RoleAssistant
		}
		out = append(out, llm.Message{Role: role, Content: strings.Repeat("a long line of talk ", 20)})
	}
	return append(out, llm.Message{Role: llm.RoleUser, Content: "and now?"})
}

func TestContextLengthErrorsAreNamed(t *testing.T) {
	tests := []struct {
		flavor  llmtest.Flavor
		advice  string
		counted bool
	}{
		{llmtest.LlamaCpp, "-c 16384", true},
		{llmtest.VLLM, "--max-model-len", true},
	}
	for _, tt := range tests {
		t.Run(string(tt.flavor), func(t *testing.T) {
			srv := &llmtest.Server{Flavor: tt.flavor, Window: 512, Models: []string{"qwen3:8b"}}
			c := replica(t, srv, nil)
			_, err := c.Chat(context.Background(), llm.Request{Messages: longMessages(20), MaxTokens: 100})
			var e *llm.Error
			if !errorsAs(err, &e) || e.Kind != llm.ContextLength {
				t.Fatalf("err = %v, want ContextLength", err)
			}
			if tt.counted && (e.Window != 512 || e.PromptTokens <= 512) {
				t.Errorf("counts: window %d, prompt %d", e.Window, e.PromptTokens)
			}
			if !strings.Contains(err.Error(), tt.advice) || strings.Contains(err.Error(), "JSON schema") {
				t.Errorf("advice does not fit the error: %v", err)
			}
			// Streamed, the same.
			_, err = c.Stream(context.Background(), llm.Request{Messages: longMessages(20), MaxTokens: 100}, nil)
			if llm.KindOf(err) != llm.ContextLength {
				t.Errorf("stream: %v", err)
			}
		})
	}
}

func TestToolsRefusedAreNamedWithTheirFix(t *testing.T) {
	tools := []llm.Tool{{Name: "remember", Parameters: json.RawMessage(`{"type":"object"}`)}}
	tests := []struct {
		flavor llmtest.Flavor
		fix    string
	}{
		{llmtest.Ollama, "`ollama show qwen3:8b`"},
		{llmtest.VLLM, "--enable-auto-tool-choice --tool-call-parser hermes"},
	}
	for _, tt := range tests {
		t.Run(string(tt.flavor), func(t *testing.T) {
			srv := &llmtest.Server{Flavor: tt.flavor, NoTools: true, Models: []string{"qwen3:8b"}}
			c := replica(t, srv, nil)
			_, err := c.Chat(context.Background(), llm.Request{Messages: longMessages(0), Tools: tools})
			var e *llm.Error
			if !errorsAs(err, &e) || e.Kind != llm.Unsupported || e.Feature != "tools" {
				t.Fatalf("err = %v, want Unsupported tools", err)
			}
			if !strings.Contains(err.Error(), tt.fix) {
				t.Errorf("err = %v, want the fix %q", err, tt.fix)
			}
			// Without tools the server answers.
			if _, err := c.Chat(context.Background(), llm.Request{Messages: longMessages(0)}); err != nil {
				t.Errorf("without tools: %v", err)
			}
		})
	}
}

func TestThinkOffOnTheWire(t *testing.T) {
	tests := []struct {
		form   string
		flavor llmtest.Flavor
		check  func(r llmtest.Request) bool
	}{
		{"reasoning_effort", llmtest.Ollama, func(r llmtest.Request) bool { return r.ReasoningEffort == "none" }},
		{"chat_template_kwargs", llmtest.VLLM, func(r llmtest.Request) bool { return r.ChatTemplateKwargs["enable_thinking"] == false }},
		{"", llmtest.LlamaCpp, func(r llmtest.Request) bool { return r.ChatTemplateKwargs["enable_thinking"] == false }}, // auto, a local server
	}
	for _, tt := range tests {
		t.Run(string(tt.flavor), func(t *testing.T) {
			srv := &llmtest.Server{Flavor: tt.flavor, Thinks: true, Models: []string{"qwen3:8b"}}
			c := replica(t, srv, func(o *llm.Options) { o.ThinkOff = tt.form })
			resp, err := c.Chat(context.Background(), llm.Request{Messages: longMessages(0), Think: llm.ThinkOff})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Reasoning != "" {
				t.Errorf("the model thought: %q", resp.Reasoning)
			}
			if !tt.check(srv.Requests()[0]) {
				t.Errorf("request body %s does not turn thinking off", srv.Requests()[0].Body)
			}
			// A request that does not ask for it thinks.
			resp, err = c.Chat(context.Background(), llm.Request{Messages: longMessages(0)})
			if err != nil || resp.Reasoning == "" {
				t.Errorf("default request: reasoning %q, err %v", resp.Reasoning, err)
			}
		})
	}
}

func TestThinkOffRefusedCoolsDown(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	srv := &llmtest.Server{RejectFields: []string{"chat_template_kwargs"}}
	c := replica(t, srv, func(o *llm.Options) {
		o.ThinkOff = "chat_template_kwargs"
		o.Now = func() time.Time { return now }
	})
	req := llm.Request{Messages: longMessages(0), Think: llm.ThinkOff}
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatalf("the refused form was not dropped: %v", err)
	}
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()
	if len(got) != 3 || got[1].ChatTemplateKwargs != nil || got[2].ChatTemplateKwargs != nil {
		t.Fatalf("requests: %d; want the refusal, its retry and a second call without the field", len(got))
	}
	now = now.Add(llm.ThinkOffCooldown + time.Second)
	srv.Reset()
	_, _ = c.Chat(context.Background(), req)
	if got := srv.Requests(); got[0].ChatTemplateKwargs == nil {
		t.Error("after the cooldown the form is not tried again")
	}
}

func TestProbeWindow(t *testing.T) {
	tests := []struct {
		name   string
		srv    *llmtest.Server
		tokens int
		server string
	}{
		{"ollama not loaded", &llmtest.Server{Flavor: llmtest.Ollama, Window: 4096, ModelMax: 40960}, 4096, "ollama"},
		{"ollama loaded", &llmtest.Server{Flavor: llmtest.Ollama, Window: 8192, ModelMax: 40960, Loaded: true}, 8192, "ollama"},
		{"vllm", &llmtest.Server{Flavor: llmtest.VLLM, Window: 32768}, 32768, "vllm"},
		{"llama.cpp", &llmtest.Server{Flavor: llmtest.LlamaCpp, Window: 4096, ModelMax: 40960}, 4096, "llama.cpp"},
		{"plain", &llmtest.Server{}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.srv.Models = []string{"qwen3:8b"}
			w, err := llm.ProbeWindow(context.Background(), replica(t, tt.srv, nil), "")
			if err != nil {
				t.Fatal(err)
			}
			if w.Tokens != tt.tokens || w.Server != tt.server {
				t.Errorf("window = %+v, want %d tokens from %q", w, tt.tokens, tt.server)
			}
		})
	}
}

func TestCheckProbesToolsAndJSON(t *testing.T) {
	t.Run("ollama model without tools", func(t *testing.T) {
		srv := &llmtest.Server{Flavor: llmtest.Ollama, NoTools: true, Models: []string{"qwen3:8b"}}
		srv.Default = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: `{"ok": true}`} }
		r := llm.Check(context.Background(), replica(t, srv, nil), "qwen3:8b")
		if !r.Answered || r.Tools || !strings.Contains(r.ToolsError, "ollama show qwen3:8b") || !r.JSON {
			t.Errorf("result = %+v", r)
		}
		if r.Window == nil || r.Window.Tokens != llm.OllamaDefaultNumCtx || !r.Window.Assumed {
			t.Errorf("window = %+v", r.Window)
		}
	})
	t.Run("vllm without auto tool choice", func(t *testing.T) {
		srv := &llmtest.Server{Flavor: llmtest.VLLM, NoTools: true, Window: 32768, Models: []string{"qwen3:8b"}}
		r := llm.Check(context.Background(), replica(t, srv, nil), "qwen3:8b")
		if r.Tools || !strings.Contains(r.ToolsError, "--enable-auto-tool-choice --tool-call-parser") {
			t.Errorf("result = %+v", r)
		}
		if r.JSON || !strings.Contains(r.JSONError, "JSON") {
			t.Errorf("a model answering ok to a JSON step passed: %+v", r)
		}
	})
	t.Run("all well", func(t *testing.T) {
		srv := &llmtest.Server{Models: []string{"claude-sonnet-4-5-20250929"}}
		srv.Default = func(q llmtest.Request) llmtest.Reply {
			if len(q.Tools) > 0 {
				return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "note", Arguments: `{"text":"ok"}`}}}
			}
			return llmtest.Reply{Text: "```json\n{\"ok\": true}\n```"}
		}
		r := llm.Check(context.Background(), replica(t, srv, nil), "claude-sonnet-4-5")
		if !r.Listed || !r.Tools || !r.ToolCalled || !r.JSON {
			t.Errorf("result = %+v", r)
		}
	})
}

func errorsAs(err error, e **llm.Error) bool { return errors.As(err, e) }

func TestFirstByteTimeout(t *testing.T) {
	f := newFixture(t, "openai", func(o *llm.Options) {
		o.Timeout = time.Minute
		o.FirstByteTimeout = 50 * time.Millisecond
		o.MaxRetries = -1
	})
	f.srv.Enqueue(llmtest.Reply{Hang: true})
	_, err := f.client.Stream(context.Background(), llm.Request{Messages: longMessages(0)}, nil)
	if llm.KindOf(err) != llm.Timeout || !strings.Contains(err.Error(), "first_byte_timeout") {
		t.Fatalf("err = %v, want the first-byte timeout", err)
	}
	// Once the answer has begun, only the whole-call timeout applies.
	f.srv.Enqueue(llmtest.Reply{Text: "slow but steady", ChunkDelay: 30 * time.Millisecond})
	if _, err := f.client.Stream(context.Background(), llm.Request{Messages: longMessages(0)}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestWindowSource(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	fixed := llm.WindowSource(nil, "", 8192, time.Minute, clock)
	if w := fixed(context.Background()); w.Tokens != 8192 || w.Source != "llm.context_window" {
		t.Errorf("fixed = %+v", w)
	}
	srv := &llmtest.Server{Flavor: llmtest.Ollama, Window: 16384, Models: []string{"qwen3:8b"}}
	src := llm.WindowSource(replica(t, srv, nil), "qwen3:8b", 0, time.Minute, clock)
	if w := src(context.Background()); w.Tokens != llm.OllamaDefaultNumCtx || !w.Assumed {
		t.Fatalf("not loaded: %+v", w)
	}
	asked := len(srv.Requests())
	src(context.Background())
	if len(srv.Requests()) == asked {
		t.Error("an assumed window is not asked again on the next turn")
	}
	// The model loads with the first turn; the next asks again at once.
	loaded := &llmtest.Server{Flavor: llmtest.Ollama, Window: 16384, Loaded: true, Models: []string{"qwen3:8b"}}
	src = llm.WindowSource(replica(t, loaded, nil), "qwen3:8b", 0, time.Minute, clock)
	if w := src(context.Background()); w.Tokens != 16384 || w.Assumed {
		t.Fatalf("loaded: %+v", w)
	}
	n := len(loaded.Requests())
	src(context.Background())
	if len(loaded.Requests()) != n {
		t.Error("a known window was asked again within the ttl")
	}
	now = now.Add(time.Minute)
	src(context.Background())
	if len(loaded.Requests()) == n {
		t.Error("the window was not asked again after the ttl")
	}
}
