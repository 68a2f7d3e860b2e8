package cmd

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/embedtest"
)

func TestDoctorEmbeddingLine(t *testing.T) {
	fake := &embedtest.Server{Models: []string{"llama3.2", "nomic-embed-text", "bge-m3"}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	llmCfg := config.LLM{Provider: "openai", BaseURL: srv.URL + "/v1", Model: "llama3.2"}
	tests := []struct {
		name  string
		embed config.Embed
		ok    bool
		want  []string
	}{
		{"builtin, and the LLM server has embedding models", config.Embed{Provider: "builtin"}, true,
			[]string{"built-in embedder", "nomic-embed-text, bge-m3", "set embed.provider: ollama and embed.model: nomic-embed-text"}},
		{"none", config.Embed{Provider: "none"}, true, []string{"by words alone"}},
		{"ollama", config.Embed{Provider: "ollama", BaseURL: srv.URL, Model: "nomic-embed-text"}, true,
			[]string{"ollama:nomic-embed-text", "64 dimensions"}},
		{"openai-compatible", config.Embed{Provider: "openai", BaseURL: srv.URL + "/v1", Model: "bge-m3"}, true,
			[]string{"openai:bge-m3 at"}},
		{"a model the server lacks", config.Embed{Provider: "ollama", BaseURL: srv.URL, Model: "mxbai-embed-large"}, false,
			[]string{"not found", "ollama pull mxbai-embed-large"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := checkEmbed(&config.Config{LLM: llmCfg, Embed: tt.embed}, 5*time.Second)
			got := c.msg + " " + c.fix
			if c.ok != tt.ok {
				t.Errorf("ok = %v: %s", c.ok, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
		})
	}
	// With no embedding model on the server, the builtin line suggests none.
	plain := httptest.NewServer(&embedtest.Server{Models: []string{"llama3.2"}})
	defer plain.Close()
	c := checkEmbed(&config.Config{LLM: config.LLM{BaseURL: plain.URL + "/v1"}, Embed: config.Embed{Provider: "builtin"}}, 5*time.Second)
	if !c.ok || strings.Contains(c.msg, "embed.provider") {
		t.Errorf("no embedding model on the server: %+v", c)
	}
}
