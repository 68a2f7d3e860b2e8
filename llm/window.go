package llm

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Window is what a server says of the context window it runs a model with.
type Window struct {
	// Tokens is the window the server gives the model now (prompt and
	// answer together); 0 when nothing says.
	Tokens int `json:"tokens"`
	// ModelMax is the most the model was trained for (0: unknown).
	ModelMax int `json:"model_max,omitempty"`
	// Server is "ollama", "vllm", "llama.cpp", "anthropic" or "".
	Server string `json:"server,omitempty"`
	// Source says where Tokens came from, for the doctor and traces.
	Source string `json:"source,omitempty"`
	// Assumed: Tokens is the server's default, not a reading (an Ollama
	// model that is not loaded yet).
	Assumed bool `json:"assumed,omitempty"`
}

// OllamaDefaultNumCtx is the window Ollama gives a model on a machine with
// less than 23 GiB of GPU memory (server/routes.go: 4096, 32768 from 23
// GiB, 262144 from 47 GiB), unless OLLAMA_CONTEXT_LENGTH or the model's
// num_ctx parameter says otherwise.
const OllamaDefaultNumCtx = 4096

// anthropicWindow is the documented window of Anthropic's current models.
const anthropicWindow = 200_000

// ProbeWindow asks c's server for model's window: Ollama's /api/show
// (the model's context length and num_ctx parameter) and /api/ps (the
// window of the loaded model); else /v1/models (vLLM's max_model_len,
// llama.cpp's meta.n_ctx_train) and llama.cpp's /props (n_ctx). A window
// nothing states is Tokens 0. It returns an error only when the server
// does not answer at all. model "" is c's default.
func ProbeWindow(ctx context.Context, c Client, model string) (Window, error) {
	cl, ok := baseClient(c)
	if !ok {
		return Window{}, nil
	}
	m, err := cl.c.pickModel(model)
	if err != nil {
		return Window{}, err
	}
	if cl.c.provider == "anthropic" {
		return Window{Tokens: anthropicWindow, ModelMax: anthropicWindow, Server: "anthropic", Source: "Anthropic's documented window"}, nil
	}
	w, err := cl.c.ollamaWindow(ctx, m)
	if err == nil || KindOf(err) == Unreachable {
		return w, err
	}
	return cl.c.openAIWindow(ctx, m)
}

// getJSON makes one request without retries and decodes a 2xx answer.
func (c *conn) getJSON(ctx context.Context, method, path string, root bool, body any, v any) error {
	x := exchange{method: method, path: path, root: root, model: c.model}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		x.body = b
	}
	return c.attempt(ctx, x, func(r io.Reader, _ string) error {
		b, err := c.readBody(r, x)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return c.badResponse(c.model, err)
		}
		return nil
	})
}

// ollamaWindow reads Ollama's /api/show and /api/ps. A server without them
// answers an error that is not Unreachable.
func (c *conn) ollamaWindow(ctx context.Context, model string) (Window, error) {
	var show struct {
		ModelInfo  map[string]any `json:"model_info"`
		Parameters string         `json:"parameters"`
		Details    struct {
			ContextLength int `json:"context_length"`
		} `json:"details"`
	}
	if err := c.getJSON(ctx, http.MethodPost, "/api/show", true, map[string]string{"model": model}, &show); err != nil {
		return Window{}, err
	}
	w := Window{Server: "ollama", ModelMax: show.Details.ContextLength}
	if w.ModelMax == 0 {
		for k, v := range show.ModelInfo {
			if k == "context_length" || strings.HasSuffix(k, ".context_length") {
				if f, ok := v.(float64); ok && f > 0 {
					w.ModelMax = int(f)
				}
			}
		}
	}
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if err := c.getJSON(ctx, http.MethodGet, "/api/ps", true, nil, &ps); err == nil {
		for _, m := range ps.Models {
			if (sameModel(m.Name, model) || sameModel(m.Model, model)) && m.ContextLength > 0 {
				w.Tokens, w.Source = m.ContextLength, "Ollama /api/ps (the loaded model's num_ctx)"
				return w, nil
			}
		}
	}
	if n := paramNumCtx(show.Parameters); n > 0 {
		w.Tokens, w.Source = n, "the model's num_ctx parameter (ollama show)"
		return w, nil
	}
	w.Tokens, w.Assumed = OllamaDefaultNumCtx, true
	w.Source = "Ollama's default num_ctx below 23 GiB of GPU memory (the model is not loaded, so /api/ps cannot say; set llm.context_window to the server's OLLAMA_CONTEXT_LENGTH)"
	if w.ModelMax > 0 && w.ModelMax < w.Tokens {
		w.Tokens = w.ModelMax
	}
	return w, nil
}

func sameModel(a, b string) bool {
	return a != "" && strings.TrimSuffix(a, ":latest") == strings.TrimSuffix(b, ":latest")
}

// paramNumCtx reads "num_ctx 8192" from /api/show's parameters text.
func paramNumCtx(params string) int {
	sc := bufio.NewScanner(strings.NewReader(params))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "num_ctx" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// openAIWindow reads /v1/models (vLLM's max_model_len, llama.cpp's
// meta.n_ctx_train) and llama.cpp's /props.
func (c *conn) openAIWindow(ctx context.Context, model string) (Window, error) {
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
			Meta        *struct {
				NCtxTrain int `json:"n_ctx_train"`
			} `json:"meta"`
		} `json:"data"`
	}
	var w Window
	err := c.getJSON(ctx, http.MethodGet, "/models", false, nil, &list)
	if KindOf(err) == Unreachable {
		return w, err
	}
	for _, m := range list.Data {
		if m.ID != model && len(list.Data) > 1 {
			continue
		}
		switch {
		case m.MaxModelLen > 0:
			return Window{Tokens: m.MaxModelLen, ModelMax: m.MaxModelLen, Server: "vllm", Source: "vLLM /v1/models max_model_len"}, nil
		case m.Meta != nil:
			w.Server, w.ModelMax = "llama.cpp", m.Meta.NCtxTrain
		}
	}
	var props struct {
		NCtx     int `json:"n_ctx"`
		Defaults struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if err := c.getJSON(ctx, http.MethodGet, "/props", true, nil, &props); err == nil {
		n := props.Defaults.NCtx
		if n == 0 {
			n = props.NCtx
		}
		if n > 0 {
			w.Server, w.Tokens, w.Source = "llama.cpp", n, "llama.cpp /props n_ctx"
		}
	}
	return w, nil
}

// WindowSource keeps a server's window for turns: fixed when it is above 0
// (llm.context_window), else asked of the server at most every ttl (an
// Ollama model's window is known once it is loaded: an assumed window is
// asked again each time until then), each probe bounded by
// probeTimeout; a failed probe keeps the last answer. c must be a Client
// this package made (not a wrapper).
func WindowSource(c Client, model string, fixed int, ttl time.Duration, now func() time.Time) func(context.Context) Window {
	if fixed > 0 {
		w := Window{Tokens: fixed, Source: "llm.context_window"}
		return func(context.Context) Window { return w }
	}
	if now == nil {
		now = time.Now
	}
	var (
		mu   sync.Mutex
		last Window
		at   time.Time
	)
	return func(ctx context.Context) Window {
		mu.Lock()
		defer mu.Unlock()
		// An assumed window (an Ollama model not loaded yet) is asked again
		// on the next turn: by then the model is loaded and /api/ps says.
		if !at.IsZero() && now().Sub(at) < ttl && !last.Assumed {
			return last
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		if w, err := ProbeWindow(pctx, c, model); err == nil {
			last = w
		}
		at = now()
		return last
	}
}

// probeTimeout bounds one window probe inside a turn.
const probeTimeout = 5 * time.Second

// baseClient finds the Client this package made under wrappers that
// offer Unwrap (Watched, the daemon's metrics).
func baseClient(c Client) (*client, bool) {
	for range 8 {
		switch x := c.(type) {
		case *client:
			return x, true
		case interface{ Unwrap() Client }:
			c = x.Unwrap()
		default:
			return nil, false
		}
	}
	return nil, false
}
