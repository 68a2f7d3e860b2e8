package llm

import (
	"context"
	"strings"
	"testing"
)

func TestNewConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		mention string
	}{
		{"unknown provider", Options{Provider: "gemini"}, "CYAN_LLM_PROVIDER"},
		{"no scheme", Options{BaseURL: "localhost:11434/v1"}, "CYAN_LLM_BASE_URL"},
		{"ftp", Options{BaseURL: "ftp://example.com"}, "llm.base_url"},
		{"no host", Options{Provider: "anthropic", BaseURL: "https://"}, "CYAN_LLM_BASE_URL"},
		{"query", Options{BaseURL: "http://h/v1?x=1"}, "CYAN_LLM_BASE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if KindOf(err) != Config || !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("err = %v, want a Config error mentioning %s", err, tt.mention)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"openai", Options{Model: "qwen3:8b"}, "openai at http://127.0.0.1:11434/v1, model qwen3:8b"},
		{"anthropic", Options{Provider: "Anthropic"}, "anthropic at https://api.anthropic.com"},
		{"trailing slash", Options{BaseURL: "http://h:8080/v1/"}, "openai at http://h:8080/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Describe(); got != tt.want {
				t.Errorf("Describe() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNoModel(t *testing.T) {
	for _, p := range []string{"openai", "anthropic"} {
		t.Run(p, func(t *testing.T) {
			c, err := New(Options{Provider: p, BaseURL: "http://127.0.0.1:1"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
			if KindOf(err) != Config || !strings.Contains(err.Error(), "CYAN_LLM_MODEL") {
				t.Errorf("err = %v, want a Config error naming CYAN_LLM_MODEL", err)
			}
		})
	}
}
