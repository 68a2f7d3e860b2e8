package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/llm"
)

// Server is a fake LLM endpoint; use it through httptest.NewServer. Its
// zero value is ready, and it is safe for concurrent use. Set Default and
// Models before serving.
type Server struct {
	// Default makes the reply when the queue is empty. nil: Reply{Text: "ok"}.
	Default func(req Request) Reply
	// Models is what GET …/models lists. nil: ["fake-model"].
	Models []string

	// Flavor makes the server answer as Ollama, vLLM or llama.cpp where
	// they differ (replicas.go); the fields below shape it.
	Flavor Flavor
	// Window is the server's context window in tokens (CountTokens): 0 is
	// none. Ollama cuts a longer prompt silently; vLLM and llama.cpp
	// answer their 400s.
	Window int
	// ModelMax is the model's trained context length (Ollama's model_info,
	// llama.cpp's n_ctx_train).
	ModelMax int
	// Loaded: Ollama's /api/ps lists the models, with Window.
	Loaded bool
	// NoTools: the Ollama model lacks the tools capability; vLLM was
	// started without --enable-auto-tool-choice.
	NoTools bool
	// Thinks: the model thinks (Qwen 3) unless the request turns it off;
	// its replies then open with a <think> block.
	Thinks bool
	// RejectFields are request fields the server refuses, as hosted
	// OpenAI refuses unknown ones ("Unrecognized request argument").
	RejectFields []string

	mu    sync.Mutex
	queue []Reply
	reqs  []Request
	n     int // replies made, for ids
}

// Reply is one scripted answer.
type Reply struct {
	Text      string
	Reasoning string // OpenAI: reasoning_content; Anthropic: a thinking block
	ToolCalls []llm.ToolCall
	// Status, when not 0 or 200, makes an error reply with Body, or with a
	// protocol-shaped error body when Body is "". With Status 0 or 200, a
	// non-empty Body is sent verbatim in place of the scripted answer.
	Status     int
	Body       string
	RetryAfter string        // Retry-After header, if set
	Delay      time.Duration // before answering; ends early when the client goes away
	// ChunkDelay is the pause between two streamed chunks.
	ChunkDelay time.Duration
	// ChunkSize is the runes per streamed text chunk and tool-argument
	// fragment. 0: 4.
	ChunkSize int
	Usage     llm.Usage // zero: {InputTokens: 10, OutputTokens: 5}
	// FinishReason in OpenAI terms ("stop", "length", "tool_calls");
	// mapped to stop_reason for Anthropic. "": stop, or tool_calls when
	// there are tool calls.
	FinishReason string
	Hang         bool // never answer; return when the client goes away
	// Server, when set, streams an OpenAI-compatible answer as that model
	// server does (Ollama, VLLM, VLLMReasoning, LlamaCpp: servers.go).
	Server Flavor
	// CutAfter > 0 makes the model stop after that many runes of text,
	// the stream ending as Server ends it then.
	CutAfter int
	// KeepAlive, for a streamed request, sends only ": keep-alive" comment
	// lines at this interval until the client goes away (replicas.go).
	KeepAlive time.Duration
}

// Request is one request the server received, decoded from either
// protocol into llm types.
type Request struct {
	Method   string
	Path     string
	Header   http.Header
	Body     []byte
	Protocol string // "openai" or "anthropic"
	Model    string
	Stream   bool
	// System is the system prompt: Anthropic's system field, or the OpenAI
	// system messages joined (which also stay in Messages).
	System         string
	Messages       []llm.Message
	Tools          []llm.Tool
	ResponseFormat json.RawMessage // OpenAI response_format, verbatim
	MaxTokens      int
	// ReasoningEffort and ChatTemplateKwargs are the request's, as sent.
	ReasoningEffort    string
	ChatTemplateKwargs map[string]any
	// PromptTokens is the prompt as the replicas count it (CountTokens),
	// after an Ollama cut; Truncated is how many messages the cut dropped.
	PromptTokens int
	Truncated    int
}

// SetDefault sets Default safely while the server is serving (a test that
// changes it after httptest.NewServer must use this, or the race detector
// rightly objects).
func (s *Server) SetDefault(f func(req Request) Reply) {
	s.mu.Lock()
	s.Default = f
	s.mu.Unlock()
}

// Enqueue adds replies to play, in order, to the next chat requests.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	copy(out, s.reqs)
	return out
}

// Reset forgets the queued replies and the recorded requests.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue, s.reqs = nil, nil
}

// ServeHTTP routes by path suffix, so base URLs with or without /v1 work.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Protocol: protocolOf(r)}
	path := strings.TrimRight(r.URL.Path, "/")
	if s.serveReplica(w, r, path, body) {
		s.record(req)
		return
	}
	switch {
	case strings.HasSuffix(path, "/chat/completions") && r.Method == http.MethodPost:
		req.Protocol = "openai"
		problem := decodeOpenAI(&req)
		if problem != "" {
			s.record(req)
			writeError(w, req.Protocol, http.StatusBadRequest, problem)
			return
		}
		answered := s.replica(w, &req)
		s.record(req)
		if answered {
			return
		}
		s.answer(w, r, req, openAIWriter{})
	case strings.HasSuffix(path, "/messages") && r.Method == http.MethodPost:
		req.Protocol = "anthropic"
		problem := decodeAnthropic(&req)
		s.record(req)
		if problem != "" {
			writeError(w, req.Protocol, http.StatusBadRequest, problem)
			return
		}
		s.answer(w, r, req, anthropicWriter{})
	case strings.HasSuffix(path, "/models") && r.Method == http.MethodGet:
		s.record(req)
		s.listModels(w)
	default:
		s.record(req)
		writeError(w, req.Protocol, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
	}
}

func protocolOf(r *http.Request) string {
	if r.Header.Get("anthropic-version") != "" || r.Header.Get("x-api-key") != "" {
		return "anthropic"
	}
	return "openai"
}

func (s *Server) record(req Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
}

// next pops the next reply, or makes the default one.
func (s *Server) next(req Request) (Reply, int) {
	s.mu.Lock()
	s.n++
	n := s.n
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return r, n
	}
	def := s.Default
	s.mu.Unlock()
	if def != nil {
		return def(req), n
	}
	return Reply{Text: "ok"}, n
}

// protocolWriter writes replies in one protocol.
type protocolWriter interface {
	plain(w http.ResponseWriter, req Request, rep Reply, n int)
	stream(sw *sseWriter, req Request, rep Reply, n int)
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, req Request, pw protocolWriter) {
	rep, n := s.next(req)
	ctx := r.Context()
	if rep.Hang {
		<-ctx.Done()
		return
	}
	if rep.KeepAlive > 0 && req.Stream {
		keepAlive(w, r, rep.KeepAlive)
		return
	}
	s.mu.Lock()
	thinks := s.Thinks
	s.mu.Unlock()
	if thinks && req.thinking() && rep.Reasoning == "" && rep.Body == "" {
		rep.Text = "<think>\nLet me think about what to say.\n</think>\n\n" + rep.Text
	}
	if !wait(ctx, rep.Delay) {
		return
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		if rep.Body != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.Status)
			io.WriteString(w, rep.Body)
			return
		}
		writeError(w, req.Protocol, rep.Status, http.StatusText(rep.Status))
		return
	}
	if rep.Body != "" {
		ct := "application/json"
		if req.Stream {
			ct = "text/event-stream"
		}
		w.Header().Set("Content-Type", ct)
		io.WriteString(w, rep.Body)
		return
	}
	if rep.Usage == (llm.Usage{}) {
		rep.Usage = llm.Usage{InputTokens: 10, OutputTokens: 5}
	}
	if rep.ChunkSize <= 0 {
		rep.ChunkSize = 4
	}
	for i := range rep.ToolCalls {
		if rep.ToolCalls[i].ID == "" {
			rep.ToolCalls[i].ID = fmt.Sprintf("call_fake_%d_%d", n, i)
		}
	}
	if rep.FinishReason == "" {
		rep.FinishReason = "stop"
		if len(rep.ToolCalls) > 0 {
			rep.FinishReason = "tool_calls"
		}
	}
	model := req.Model
	if model == "" {
		model = "fake-model"
	}
	req.Model = model
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		pw.plain(w, req, rep, n)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	sw := &sseWriter{w: w, delay: rep.ChunkDelay, ctx: ctx}
	sw.flush()
	pw.stream(sw, req, rep, n)
}

func (s *Server) listModels(w http.ResponseWriter) {
	models := s.Models
	if models == nil {
		models = []string{"fake-model"}
	}
	type model struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Type        string `json:"type"`
		DisplayName string `json:"display_name"`
		OwnedBy     string `json:"owned_by"`
		Created     int64  `json:"created"`
	}
	list := struct {
		Object  string  `json:"object"`
		Data    []model `json:"data"`
		HasMore bool    `json:"has_more"`
	}{Object: "list", Data: []model{}}
	for _, m := range models {
		list.Data = append(list.Data, model{ID: m, Object: "model", Type: "model", DisplayName: m, OwnedBy: "llmtest", Created: 1700000000})
	}
	writeJSON(w, http.StatusOK, list)
}

// writeError sends an error in the protocol's own shape.
func writeError(w http.ResponseWriter, protocol string, status int, msg string) {
	if protocol == "anthropic" {
		typ := "api_error"
		switch status {
		case 400:
			typ = "invalid_request_error"
		case 401:
			typ = "authentication_error"
		case 403:
			typ = "permission_error"
		case 404:
			typ = "not_found_error"
		case 429:
			typ = "rate_limit_error"
		case 529:
			typ = "overloaded_error"
		}
		writeJSON(w, status, map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
		return
	}
	typ := "server_error"
	if status < 500 {
		typ = "invalid_request_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// wait sleeps d, or less when ctx ends; it reports whether ctx is alive.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// sseWriter writes server-sent events and flushes each one.
type sseWriter struct {
	w       http.ResponseWriter
	ctx     context.Context
	delay   time.Duration
	written bool
}

// event writes one event (name may be "") with v as JSON data, pausing
// ChunkDelay between events. It reports whether the client is still there.
func (sw *sseWriter) event(name string, v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return sw.raw(name, string(b))
}

func (sw *sseWriter) raw(name, data string) bool {
	if sw.written && !wait(sw.ctx, sw.delay) {
		return false
	}
	sw.written = true
	var b strings.Builder
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	b.WriteString("data: " + data + "\n\n")
	if _, err := io.WriteString(sw.w, b.String()); err != nil {
		return false
	}
	sw.flush()
	return sw.ctx.Err() == nil
}

func (sw *sseWriter) flush() {
	if f, ok := sw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// chunks splits s into pieces of n runes.
func chunks(s string, n int) []string {
	var out []string
	rs := []rune(s)
	for len(rs) > 0 {
		k := min(n, len(rs))
		out = append(out, string(rs[:k]))
		rs = rs[k:]
	}
	return out
}

// fragments splits tool arguments into pieces of n runes, and into at least
// two pieces when they are longer than one rune, so clients must assemble.
func fragments(s string, n int) []string {
	if r := []rune(s); len(r) > 1 && n >= len(r) {
		n = (len(r) + 1) / 2
	}
	return chunks(s, n)
}

// Start serves a new fake on a local port for the test's duration and
// returns it with a client of its OpenAI-compatible endpoint (model
// "fake-model", no retries).
func Start(t testing.TB) (*Server, llm.Client) {
	t.Helper()
	fake := new(Server)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	client, err := llm.New(llm.Options{BaseURL: srv.URL + "/v1", Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return fake, client
}
