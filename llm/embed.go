package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Embedder turns texts into vectors through a provider's embeddings
// endpoint, with the same timeouts, retries and errors as a chat call.
type Embedder interface {
	Embed(ctx context.Context, req EmbedRequest) (*EmbedResponse, error)
	// Describe names the provider, endpoint and model.
	Describe() string
}

// EmbedRequest is one embeddings call.
type EmbedRequest struct {
	Model string   // "": the embedder's default model
	Input []string // at least one text
}

// EmbedResponse is a finished embeddings call: one vector per input, in
// order, all of one dimension.
type EmbedResponse struct {
	Vectors [][]float32
	Model   string
	// Usage.InputTokens is what the provider counted (0 if it did not).
	Usage Usage
}

// EmbedOptions configure NewEmbedder.
type EmbedOptions struct {
	// Provider is "ollama" (POST /api/embed, the base URL being Ollama's
	// root, http://127.0.0.1:11434 by default; a trailing /v1 or /api is
	// dropped) or "openai" (POST BaseURL+"/embeddings" of any
	// OpenAI-compatible server, Ollama's /v1 among them).
	Provider   string
	BaseURL    string
	Model      string
	APIKey     string
	Timeout    time.Duration // per try; 0: 120 s
	MaxRetries int           // 0: 2; negative: none
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Sleep waits between tries (nil: a timer); tests inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultOllamaURL is Ollama's root URL, the default of an ollama embedder.
const DefaultOllamaURL = "http://127.0.0.1:11434"

// NewEmbedder returns an Embedder for opts.Provider. An unknown provider,
// an invalid URL or a missing model is a Config *Error saying what to set.
func NewEmbedder(opts EmbedOptions) (Embedder, error) {
	provider := strings.ToLower(strings.TrimSpace(opts.Provider))
	base := strings.TrimSpace(opts.BaseURL)
	switch provider {
	case "ollama":
		if base == "" {
			base = DefaultOllamaURL
		}
	case "openai":
		if base == "" {
			base = defaultOpenAIURL
		}
	default:
		return nil, &Error{Kind: Config, Provider: opts.Provider, Message: fmt.Sprintf(
			"embeddings: unknown provider %q: set embed.provider to ollama (/api/embed) or openai (any OpenAI-compatible /v1/embeddings)", opts.Provider)}
	}
	base, err := cleanBaseURL(base)
	if err != nil {
		return nil, &Error{Kind: Config, Provider: provider, URL: opts.BaseURL, Err: err, Message: fmt.Sprintf(
			"embeddings: invalid base URL %q (%v): set embed.base_url to an http(s) URL such as %s", opts.BaseURL, err, DefaultOllamaURL)}
	}
	if provider == "ollama" {
		base = strings.TrimSuffix(strings.TrimSuffix(base, "/v1"), "/api")
	}
	if strings.TrimSpace(opts.Model) == "" {
		return nil, &Error{Kind: Config, Provider: provider, URL: base, Message: "embeddings: no model: set embed.model (e.g. nomic-embed-text)"}
	}
	c := &conn{provider: provider, baseURL: base, model: strings.TrimSpace(opts.Model), apiKey: opts.APIKey,
		http: opts.HTTPClient, log: opts.Logger, sleep: opts.Sleep, timeout: opts.Timeout, retries: opts.MaxRetries, now: time.Now}
	c.fillDefaults()
	c.header = func(h http.Header) {
		if c.apiKey != "" {
			h.Set("Authorization", "Bearer "+c.apiKey)
		}
	}
	return &embedder{c: c}, nil
}

type embedder struct{ c *conn }

var _ Embedder = (*embedder)(nil)

func (e *embedder) Describe() string { return e.c.describe() }

// Embed runs one embeddings call. A reply with another number of vectors
// than inputs, an empty vector or vectors of different dimensions is a
// BadResponse *Error.
func (e *embedder) Embed(ctx context.Context, req EmbedRequest) (*EmbedResponse, error) {
	c := e.c
	model, err := c.pickModel(req.Model)
	if err != nil {
		return nil, err
	}
	if len(req.Input) == 0 {
		return &EmbedResponse{Model: model}, nil
	}
	body, _ := json.Marshal(struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{model, req.Input})
	path := "/embeddings"
	if c.provider == "ollama" {
		path = "/api/embed"
	}
	out := &EmbedResponse{Model: model}
	x := exchange{method: http.MethodPost, path: path, model: model, body: body}
	err = c.call(ctx, x, func(b []byte) error {
		if c.provider == "ollama" {
			var r struct {
				Model      string      `json:"model"`
				Embeddings [][]float32 `json:"embeddings"`
				Prompt     int         `json:"prompt_eval_count"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				return c.badResponse(model, fmt.Errorf("embeddings: %w", err))
			}
			out.Vectors, out.Usage.InputTokens = r.Embeddings, r.Prompt
			return nil
		}
		var r struct {
			Data []struct {
				Index     *int      `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
			Usage struct {
				Prompt int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return c.badResponse(model, fmt.Errorf("embeddings: %w", err))
		}
		out.Vectors = make([][]float32, len(r.Data))
		for i, d := range r.Data {
			at := i
			if d.Index != nil {
				at = *d.Index
			}
			if at < 0 || at >= len(out.Vectors) || out.Vectors[at] != nil {
				return c.badResponse(model, fmt.Errorf("embeddings: index %d out of order", at))
			}
			out.Vectors[at] = d.Embedding
		}
		out.Usage.InputTokens = r.Usage.Prompt
		return nil
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Embeddings = true
		}
		return nil, err
	}
	if len(out.Vectors) != len(req.Input) {
		return nil, c.badResponse(model, fmt.Errorf("embeddings: %d vectors for %d texts", len(out.Vectors), len(req.Input)))
	}
	for i, v := range out.Vectors {
		if len(v) == 0 {
			return nil, c.badResponse(model, fmt.Errorf("embeddings: text %d got an empty vector", i))
		}
		if len(v) != len(out.Vectors[0]) {
			return nil, c.badResponse(model, fmt.Errorf("embeddings: vectors of %d and %d dimensions", len(out.Vectors[0]), len(v)))
		}
	}
	return out, nil
}
