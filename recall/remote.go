package recall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// RemoteEmbedder calls an embedding server: Ollama's /api/embed or an
// OpenAI-compatible /v1/embeddings.
type RemoteEmbedder struct {
	// Provider is "ollama" or "openai".
	Provider string
	// BaseURL is the server: http://127.0.0.1:11434 for Ollama (a trailing
	// /api or /v1 is accepted), or the /v1 base of an OpenAI-compatible one.
	BaseURL string
	Model   string
	APIKey  string
	// HTTP is the client (nil: one with a 60 s timeout).
	HTTP *http.Client
}

// ID implements Embedder.
func (r *RemoteEmbedder) ID() string { return r.Provider + ":" + r.Model }

// Embed implements Embedder.
func (r *RemoteEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	base := strings.TrimRight(r.BaseURL, "/")
	var url string
	var body any
	switch r.Provider {
	case "ollama":
		base = strings.TrimSuffix(strings.TrimSuffix(base, "/api"), "/v1")
		url = base + "/api/embed"
		body = map[string]any{"model": r.Model, "input": texts}
	case "openai":
		url = base + "/embeddings"
		body = map[string]any{"model": r.Model, "input": texts}
	default:
		return nil, fmt.Errorf("recall: embedder provider %q is not ollama or openai", r.Provider)
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("recall: embed: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.APIKey)
	}
	hc := r.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("recall: the embedding server at %s does not answer (%w); start it, or set embed.provider: builtin", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("recall: embed: read answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		hint := ""
		if resp.StatusCode == http.StatusNotFound {
			hint = fmt.Sprintf(" (is embed.model %q pulled, and embed.base_url right?)", r.Model)
		}
		return nil, fmt.Errorf("recall: the embedding server answered %s: %s%s", resp.Status, truncate(strings.TrimSpace(string(raw)), 300), hint)
	}
	var out [][]float32
	if r.Provider == "ollama" {
		var res struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("recall: unreadable answer from %s: %w", url, err)
		}
		out = res.Embeddings
	} else {
		var res struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("recall: unreadable answer from %s: %w", url, err)
		}
		out = make([][]float32, len(texts))
		for i, d := range res.Data {
			idx := d.Index
			if idx < 0 || idx >= len(out) {
				idx = i
			}
			out[idx] = d.Embedding
		}
	}
	if len(out) != len(texts) {
		return nil, fmt.Errorf("recall: the embedding server returned %d vectors for %d texts", len(out), len(texts))
	}
	dim := -1
	for i, v := range out {
		if len(v) == 0 {
			return nil, errors.New("recall: the embedding server returned an empty vector")
		}
		if dim >= 0 && len(v) != dim {
			return nil, fmt.Errorf("recall: the embedding server returned vectors of %d and %d dimensions", dim, len(v))
		}
		dim = len(v)
		normalize(out[i])
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
