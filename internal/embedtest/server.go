package embedtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"unicode"
)

// Server is a stand-in embeddings endpoint; use it through
// httptest.NewServer. It is safe for concurrent use. Set the exported
// fields before serving.
type Server struct {
	// Dims is the vectors' dimension (0: 64).
	Dims int
	// Models is what the model lists name (nil: ["nomic-embed-text"]); a
	// request for a model not listed gets Ollama's 404.
	Models []string
	// Synonyms maps a word to the word whose feature it shares.
	Synonyms map[string]string
	// Context is the model's context in tokens (words here); a longer
	// text is cut to it, or refused when the request says "truncate":
	// false (0: 2048, nomic-embed-text's).
	Context int
	// Poison, when set, names the texts whose vector comes out NaN: the
	// request holding one fails as Ollama fails it.
	Poison func(text string) bool
	// MaxQueue is how many requests may be in the server at once before
	// it answers 503 busy (0: 512, OLLAMA_MAX_QUEUE's default).
	MaxQueue int
	// Forget keeps no Request (long benchmarks, whose memory it would
	// grow); Requests and Texts then report none.
	Forget bool

	mu      sync.Mutex
	reqs    []Request
	fail    []int // statuses for the next embedding requests
	hold    *holdState
	pending int
}

// Request is one embeddings request received.
type Request struct {
	Path   string
	Model  string
	Input  []string
	Header http.Header
}

type holdState struct {
	min     int
	arrived chan struct{}
	release chan struct{}
}

// Fail makes the next embedding requests answer with these statuses (500,
// 429, 404, …), one each, in order.
func (s *Server) Fail(statuses ...int) {
	s.mu.Lock()
	s.fail = append(s.fail, statuses...)
	s.mu.Unlock()
}

// Hold makes embedding requests of at least minTexts texts wait until
// release is called (or their client goes away); arrived receives once
// per held request as it starts waiting. Smaller requests (a query) pass.
func (s *Server) Hold(minTexts int) (arrived <-chan struct{}, release func()) {
	h := &holdState{min: minTexts, arrived: make(chan struct{}, 64), release: make(chan struct{})}
	s.mu.Lock()
	s.hold = h
	s.mu.Unlock()
	var once sync.Once
	return h.arrived, func() { once.Do(func() { close(h.release) }) }
}

// Requests returns the embedding requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Texts counts the texts embedded so far.
func (s *Server) Texts() int {
	n := 0
	for _, r := range s.Requests() {
		n += len(r.Input)
	}
	return n
}

func (s *Server) models() []string {
	if s.Models == nil {
		return []string{"nomic-embed-text"}
	}
	return s.Models
}

// ServeHTTP routes by path suffix.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimRight(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/api/tags"):
		type model struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		}
		var list struct {
			Models []model `json:"models"`
		}
		for _, m := range s.models() {
			list.Models = append(list.Models, model{Name: m + ":latest", Model: m + ":latest"})
		}
		writeJSON(w, http.StatusOK, list)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		type model struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			OwnedBy string `json:"owned_by"`
		}
		list := struct {
			Object string  `json:"object"`
			Data   []model `json:"data"`
		}{Object: "list"}
		for _, m := range s.models() {
			list.Data = append(list.Data, model{ID: m, Object: "model", OwnedBy: "library"})
		}
		writeJSON(w, http.StatusOK, list)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/api/embed"):
		s.embed(w, r, "ollama")
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/embeddings"):
		s.embed(w, r, "openai")
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("404 page not found: %s %s", r.Method, r.URL.Path)})
	}
}

// embedRequest is api.EmbedRequest and openai.EmbedRequest together.
type embedRequest struct {
	Model          string `json:"model"`
	Input          any    `json:"input"`
	Truncate       *bool  `json:"truncate"`
	Dimensions     int    `json:"dimensions"`
	EncodingFormat string `json:"encoding_format"`
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request, proto string) {
	body, _ := io.ReadAll(r.Body)
	var in embedRequest
	if len(body) == 0 {
		s.error(w, proto, http.StatusBadRequest, "missing request body")
		return
	}
	if err := json.Unmarshal(body, &in); err != nil {
		s.error(w, proto, http.StatusBadRequest, err.Error())
		return
	}
	if proto == "openai" {
		// middleware/openai.go EmbeddingsMiddleware.
		if f := in.EncodingFormat; f != "" && !strings.EqualFold(f, "float") && !strings.EqualFold(f, "base64") {
			s.error(w, proto, http.StatusBadRequest, fmt.Sprintf("Invalid value for 'encoding_format' = %s. Supported values: ['float', 'base64'].", f))
			return
		}
		if in.Input == "" {
			in.Input = []any{""}
		}
		if l, ok := in.Input.([]any); in.Input == nil || ok && len(l) == 0 {
			s.error(w, proto, http.StatusBadRequest, "invalid input")
			return
		}
	}
	// server/routes.go EmbedHandler.
	var texts []string
	switch v := in.Input.(type) {
	case string:
		if v != "" {
			texts = []string{v}
		}
	case []any:
		for _, x := range v {
			t, ok := x.(string)
			if !ok {
				s.error(w, proto, http.StatusBadRequest, "invalid input type")
				return
			}
			texts = append(texts, t)
		}
	case nil:
	default:
		s.error(w, proto, http.StatusBadRequest, "invalid input type")
		return
	}
	s.mu.Lock()
	if !s.Forget {
		s.reqs = append(s.reqs, Request{Path: r.URL.Path, Model: in.Model, Input: texts, Header: r.Header.Clone()})
	}
	var status int
	if len(s.fail) > 0 {
		status, s.fail = s.fail[0], s.fail[1:]
	}
	h := s.hold
	busy := s.pending >= cmpOr(s.MaxQueue, 512)
	if !busy {
		s.pending++
		defer func() {
			s.mu.Lock()
			s.pending--
			s.mu.Unlock()
		}()
	}
	s.mu.Unlock()
	if status != 0 {
		s.error(w, proto, status, http.StatusText(status))
		return
	}
	if !s.known(in.Model) {
		s.error(w, proto, http.StatusNotFound, fmt.Sprintf("model %q not found, try pulling it first", in.Model))
		return
	}
	if busy {
		s.error(w, proto, http.StatusServiceUnavailable, "server busy, please try again.  maximum pending requests exceeded")
		return
	}
	if h != nil && len(texts) >= h.min {
		select {
		case h.arrived <- struct{}{}:
		default:
		}
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
	}
	vecs := make([][]float32, len(texts))
	tokens := 0
	limit := cmpOr(s.Context, 2048)
	for i, t := range texts {
		words := strings.Fields(t)
		if len(words) > limit {
			if in.Truncate != nil && !*in.Truncate {
				s.error(w, proto, http.StatusBadRequest, "the input length exceeds the context length")
				return
			}
			words = words[:limit]
			t = strings.Join(words, " ")
		}
		if s.Poison != nil && s.Poison(t) {
			s.error(w, proto, http.StatusBadRequest, "embedding contains NaN or Inf values")
			return
		}
		vecs[i] = s.Vector(t)
		if d := in.Dimensions; d > 0 && d < len(vecs[i]) {
			vecs[i] = normalized(vecs[i][:d])
		}
		tokens += len(words)
	}
	if proto == "ollama" {
		writeJSON(w, http.StatusOK, map[string]any{"model": in.Model, "embeddings": vecs,
			"total_duration": 1000000, "load_duration": 1000, "prompt_eval_count": tokens})
		return
	}
	// openai/openai.go ToEmbeddingList.
	type item struct {
		Object    string `json:"object"`
		Embedding any    `json:"embedding"`
		Index     int    `json:"index"`
	}
	data := make([]item, len(vecs))
	for i, v := range vecs {
		data[i] = item{Object: "embedding", Index: i, Embedding: v}
		if strings.EqualFold(in.EncodingFormat, "base64") {
			b := make([]byte, 4*len(v))
			for k, x := range v {
				binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(x))
			}
			data[i].Embedding = base64.StdEncoding.EncodeToString(b)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": in.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func (s *Server) known(model string) bool {
	model = strings.TrimSuffix(model, ":latest")
	for _, m := range s.models() {
		if strings.TrimSuffix(m, ":latest") == model {
			return true
		}
	}
	return false
}

// Vector is the fake's embedding of a text: each lower-cased word (mapped
// through Synonyms) adds a hashed ±1 feature; the sum is L2-normalised.
func (s *Server) Vector(text string) []float32 {
	dims := s.Dims
	if dims <= 0 {
		dims = 64
	}
	v := make([]float32, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if to, ok := s.Synonyms[w]; ok {
			w = to
		}
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dims)] += sign
	}
	return normalized(v)
}

// normalized is server/routes.go normalize: v scaled to length 1 (a zero
// vector gives the first axis, as the hash of no word would be nowhere).
func normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// error answers as Ollama does: {"error": msg}, or on its OpenAI layer
// openai/openai.go NewError's shape, the type following the status.
func (s *Server) error(w http.ResponseWriter, proto string, status int, msg string) {
	if proto == "ollama" {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	typ := "api_error"
	switch status {
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusNotFound:
		typ = "not_found_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
