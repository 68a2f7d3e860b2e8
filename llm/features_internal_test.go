package llm

import "testing"

func TestThinkOffModeAuto(t *testing.T) {
	tests := []struct{ v, provider, base, want string }{
		{"", "openai", "http://127.0.0.1:11434/v1", thinkReasoningEffort},
		{"auto", "openai", "http://ollama.lan:8080/v1", thinkReasoningEffort},
		{"", "openai", "http://127.0.0.1:8000/v1", thinkTemplateKwargs},
		{"", "openai", "http://192.168.1.20:8080/v1", thinkTemplateKwargs},
		{"", "openai", "https://api.deepseek.com/v1", thinkNone},
		{"", "anthropic", "https://api.anthropic.com", thinkNone},
		{"chat_template_kwargs", "openai", "http://127.0.0.1:11434/v1", thinkTemplateKwargs},
	}
	for _, tt := range tests {
		got, err := thinkOffMode(tt.v, tt.provider, tt.base)
		if err != nil || got != tt.want {
			t.Errorf("thinkOffMode(%q, %q, %q) = %q, %v; want %q", tt.v, tt.provider, tt.base, got, err, tt.want)
		}
	}
	if _, err := thinkOffMode("maybe", "openai", "http://x"); err == nil {
		t.Error("an unknown form was accepted")
	}
}
