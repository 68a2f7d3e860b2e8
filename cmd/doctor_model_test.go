package cmd

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// doctorOn runs the doctor's model lines against a replica, with the
// shell's settings for provider and model.
func doctorOn(t *testing.T, fake *llmtest.Server, provider, model string, prompt int) map[string]check {
	t.Helper()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	base := srv.URL + "/v1"
	if provider == "anthropic" {
		base = srv.URL
	}
	env := sayEnv(t, "")
	env["CYAN_LLM_PROVIDER"], env["CYAN_LLM_BASE_URL"], env["CYAN_LLM_MODEL"] = provider, base, model
	if provider == "anthropic" {
		env["CYAN_LLM_API_KEY"] = "k"
	}
	cfg, err := loadConfig(IO{Env: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	client, err := llm.New(llm.Options{Provider: provider, BaseURL: base, Model: model, APIKey: "k", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	r := llm.Check(context.Background(), client, model)
	if prompt > 0 {
		r.PromptTokens, r.PromptParts = prompt, "system 1274, tools 2089, conversation up to 6000"
	}
	out := map[string]check{}
	for _, c := range llmChecks(r, cfg, "") {
		out[c.name] = c
	}
	return out
}

func TestDoctorModelWithoutTools(t *testing.T) {
	fake := &llmtest.Server{Flavor: llmtest.Ollama, NoTools: true, Window: 4096, Models: []string{"gemma:2b"}}
	fake.Default = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: `{"ok": true}`} }
	cs := doctorOn(t, fake, "openai", "gemma:2b", 9363)
	if c := cs["tools"]; c.ok || !strings.Contains(c.msg, "does not support tools") || !strings.Contains(c.fix, "ollama show gemma:2b") {
		t.Errorf("tools line: %+v", c)
	}
	// The 4096 window of Ollama's default: the doctor says the prompt
	// does not fit, and how to raise the window.
	if c := cs["window"]; !c.warn || !strings.Contains(c.msg, "prompt ≈ 9363 tokens of 4096") || !strings.Contains(c.fix, "OLLAMA_CONTEXT_LENGTH=16384") {
		t.Errorf("window line: %+v", c)
	}
}

func TestDoctorVLLMWithoutAutoToolChoice(t *testing.T) {
	fake := &llmtest.Server{Flavor: llmtest.VLLM, NoTools: true, Window: 32768, Models: []string{"Qwen/Qwen3-8B"}}
	fake.Default = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: `{"ok": true}`} }
	cs := doctorOn(t, fake, "openai", "Qwen/Qwen3-8B", 9363)
	if c := cs["tools"]; c.ok || !strings.Contains(c.fix, "--enable-auto-tool-choice --tool-call-parser hermes") {
		t.Errorf("tools line: %+v", c)
	}
	if c := cs["window"]; c.warn || !strings.Contains(c.msg, "prompt ≈ 9363 tokens of 32768") {
		t.Errorf("window line: %+v", c)
	}
	if c := cs["json"]; !c.ok || c.warn {
		t.Errorf("json line: %+v", c)
	}
}

func TestDoctorAnthropicAlias(t *testing.T) {
	fake := &llmtest.Server{Models: []string{"claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"}}
	cs := doctorOn(t, fake, "anthropic", "claude-sonnet-4-5", 0)
	if c := cs["llm"]; !c.ok || c.warn || strings.Contains(c.fix, "ollama") {
		t.Errorf("an alias of a listed model: %+v", c)
	}
	cs = doctorOn(t, fake, "anthropic", "claude-sonnet-9", 0)
	if c := cs["llm"]; !c.warn || strings.Contains(c.fix, "ollama pull") || !strings.Contains(c.fix, "Anthropic") {
		t.Errorf("an unlisted Anthropic model: %+v", c)
	}
	if c := cs["window"]; !strings.Contains(c.msg, "of 200000") {
		t.Errorf("window line: %+v", c)
	}
	// The fake answers "ok" to the JSON step: named, with its fix, as a
	// warning (steps fall back to the shape in the prompt).
	if c := cs["json"]; !c.warn || !strings.Contains(c.msg, "JSON object") || c.fix == "" {
		t.Errorf("json line: %+v", c)
	}
}
