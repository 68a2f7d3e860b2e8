package cmd

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/daemon"
	"github.com/cyan-agent/cyan/llm"
)

// embeddingModel matches the names of the usual embedding models.
var embeddingModel = regexp.MustCompile(`(?i)embed|bge|minilm|(^|[^a-z])e5([^a-z]|$)|gte|arctic|paraphrase|nomic`)

// checkEmbed is the doctor's embedding line: the configured model embeds a
// word, or, with the built-in embedder, whether the LLM's server offers an
// embedding model recall could use with one config line.
func checkEmbed(cfg *config.Config, timeout time.Duration) check {
	c := check{name: "embedding"}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if cfg.Embed.Provider == "none" {
		c.ok = true
		c.msg = "none: recall finds by words alone (embed.provider: none)"
		return c
	}
	if cfg.Embed.Provider == "builtin" {
		c.ok = true
		c.msg = "built-in embedder (GloVe word vectors; no network, no download)"
		if m := serverEmbeddingModels(ctx, cfg); len(m) > 0 {
			c.msg += fmt.Sprintf("; your LLM server has %s: set embed.provider: ollama and embed.model: %s to recall by meaning",
				strings.Join(first(m, 3), ", "), strings.TrimSuffix(m[0], ":latest"))
		}
		return c
	}
	emb, err := daemon.Embedder(cfg.Embed, nil)
	if err != nil {
		c.msg = err.Error()
		c.fix = "correct embed.provider, embed.base_url and embed.model, or set embed.provider: builtin"
		return c
	}
	began := time.Now()
	vs, err := emb.Embed(ctx, []string{"ok"})
	if err != nil {
		c.msg = err.Error()
		c.fix = fmt.Sprintf("start the server or pull the model (ollama pull %s), or set embed.provider: builtin", cfg.Embed.Model)
		return c
	}
	c.ok = true
	c.msg = fmt.Sprintf("%s at %s answers (%d dimensions, %s); changing it re-embeds the history in the background",
		emb.ID(), cfg.Embed.BaseURL, len(vs[0]), time.Since(began).Round(time.Millisecond))
	return c
}

// serverEmbeddingModels lists the embedding models the LLM's
// OpenAI-compatible server (Ollama's among them) offers.
func serverEmbeddingModels(ctx context.Context, cfg *config.Config) []string {
	if cfg.LLM.Provider == "anthropic" {
		return nil
	}
	client, err := llm.New(llm.Options{Provider: cfg.LLM.Provider, BaseURL: cfg.LLM.BaseURL, Model: cfg.LLM.Model, APIKey: cfg.LLM.APIKey, MaxRetries: -1})
	if err != nil {
		return nil
	}
	models, err := client.Models(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range models {
		if embeddingModel.MatchString(m) {
			out = append(out, m)
		}
	}
	return out
}
