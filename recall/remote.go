package recall

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/cyan-agent/cyan/llm"
)

// ModelEmbedder is an embedding model on a server (Ollama's /api/embed or
// an OpenAI-compatible /v1/embeddings), called through the llm layer: its
// timeouts, retries and errors are a chat call's. It counts what it
// embeds (Usage, in Status).
type ModelEmbedder struct {
	llm      llm.Embedder
	provider string
	model    string

	calls, texts, tokens, failures atomic.Int64
}

// NewModelEmbedder makes the embedder of model served by e; provider names
// it in the embedder's ID ("ollama:nomic-embed-text"), which keys the
// stored vectors: another provider or model re-embeds everything.
func NewModelEmbedder(e llm.Embedder, provider, model string) *ModelEmbedder {
	return &ModelEmbedder{llm: e, provider: provider, model: model}
}

var _ Embedder = (*ModelEmbedder)(nil)

// ID implements Embedder.
func (m *ModelEmbedder) ID() string { return m.provider + ":" + m.model }

// Embed implements Embedder: one call for the texts, each vector
// normalised. Its errors say what to check.
func (m *ModelEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	r, err := m.llm.Embed(ctx, llm.EmbedRequest{Model: m.model, Input: texts})
	if err != nil {
		m.failures.Add(1)
		if ctx.Err() != nil {
			return nil, err
		}
		hint := "check embed.base_url and embed.model, or set embed.provider: builtin"
		if llm.KindOf(err) == llm.ModelNotFound {
			hint = fmt.Sprintf("pull it (ollama pull %s), or set embed.model to a model the server has, or embed.provider: builtin", m.model)
		}
		return nil, fmt.Errorf("recall: embedding with %s failed: %w; %s", m.llm.Describe(), err, hint)
	}
	m.calls.Add(1)
	m.texts.Add(int64(len(texts)))
	m.tokens.Add(int64(r.Usage.InputTokens))
	out := make([][]float32, len(r.Vectors))
	for i, v := range r.Vectors {
		out[i] = slices.Clone(v)
		normalize(out[i])
	}
	return out, nil
}

// EmbedUsage is what an embedder has done since the daemon started.
type EmbedUsage struct {
	Calls    int64 `json:"calls"`
	Texts    int64 `json:"texts"`
	Tokens   int64 `json:"tokens"` // as the server counted them (0 if it does not say)
	Failures int64 `json:"failures"`
}

// Usage reports the calls, texts and tokens so far.
func (m *ModelEmbedder) Usage() EmbedUsage {
	return EmbedUsage{Calls: m.calls.Load(), Texts: m.texts.Load(), Tokens: m.tokens.Load(), Failures: m.failures.Load()}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
