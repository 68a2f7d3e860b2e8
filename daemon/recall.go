package daemon

import (
	"log/slog"
	"path/filepath"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
)

// Embedder builds the recall embedder a configuration names: a model's
// calls go through the llm layer (its timeouts, retries and errors); none
// is the hashing embedder, whose vectors recall gives no weight, so it
// makes and keeps none.
func Embedder(c config.Embed, log *slog.Logger) (recall.Embedder, error) {
	switch c.Provider {
	case "ollama", "openai":
		e, err := llm.NewEmbedder(llm.EmbedOptions{Provider: c.Provider, BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey, Logger: log})
		if err != nil {
			return nil, err
		}
		return recall.NewModelEmbedder(e, c.Provider, c.Model), nil
	case "none":
		return recall.HashEmbedder{}, nil
	default:
		return recall.GloveEmbedder{}, nil
	}
}

// newRecall builds the recall index over the store and the event log's
// records, with tool mode's pass running the recall_filter and
// recall_summary prompt scripts.
func newRecall(cfg *config.Config, st *store.Store, scripts recall.Scripts, log *events.Log, logger *slog.Logger) (*recall.Index, error) {
	emb, err := Embedder(cfg.Embed, logger.With("component", "recall"))
	if err != nil {
		return nil, err
	}
	return recall.New(recall.Options{
		Store: st, Embedder: emb, IndexKind: cfg.Embed.Index, VectorWeight: cfg.Embed.VectorWeight,
		CacheDir: filepath.Join(cfg.DataDir, "recall"), Logger: logger.With("component", "recall"),
		Judge: recall.NewScriptJudge(scripts), Rewrite: true, Records: log,
	})
}
