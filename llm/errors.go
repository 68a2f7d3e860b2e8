package llm

import (
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Kind says what went wrong in a call, so that callers can react (retry
// later, ask for a key, map to an HTTP status) without parsing messages.
type Kind string

// The kinds of Error.
const (
	// Unreachable: no connection to the endpoint (refused, reset, DNS, TLS),
	// or the connection was lost before the answer was complete.
	Unreachable Kind = "unreachable"
	// Timeout: the endpoint did not answer within the configured time.
	Timeout Kind = "timeout"
	// Auth: the API key is missing, wrong or lacks permission (401, 403).
	Auth Kind = "auth"
	// ModelNotFound: the endpoint does not serve the requested model.
	ModelNotFound Kind = "model_not_found"
	// RateLimited: too many requests (429); RetryAfter says when to retry,
	// when the provider said so.
	RateLimited Kind = "rate_limited"
	// Quota: the account is out of credit or quota (402, insufficient_quota).
	Quota Kind = "quota"
	// BadRequest: the endpoint rejected the request (400, 404, 422, …).
	BadRequest Kind = "bad_request"
	// Server: the endpoint failed (5xx, or an error event mid-stream).
	Server Kind = "server"
	// BadResponse: the answer could not be understood.
	BadResponse Kind = "bad_response"
	// ContextLength: the prompt does not fit the window the server runs
	// the model with (llama.cpp's exceed_context_size_error, vLLM's
	// "maximum context length", OpenAI's context_length_exceeded,
	// Anthropic's "prompt is too long"). PromptTokens and Window say what
	// the server counted, when it said.
	ContextLength Kind = "context_length"
	// Unsupported: the model or server lacks a feature the request used;
	// Feature names it ("tools", "thinking", "think_off", "json_schema").
	Unsupported Kind = "unsupported"
	// Config: the client is not configured well enough to make the call
	// (unknown provider, invalid base URL, no model). Its Message is cyan's
	// own and says what to set.
	Config Kind = "config"
)

// Error is every failure of a call to a provider, apart from the caller's
// context ending (that error wraps ctx.Err() and is not an *Error).
// Error() reads as advice a user can act on.
type Error struct {
	Kind     Kind
	Provider string // "openai" or "anthropic"
	URL      string // the configured base URL
	Model    string
	Status   int // HTTP status, 0 when there was none
	// Message is the provider's own message when it sent one, otherwise a
	// short account of what failed ("connection refused").
	Message string
	// RetryAfter is how long the provider asked to wait (Retry-After).
	RetryAfter time.Duration
	Err        error // the underlying error, if any
	// Feature is what an Unsupported error concerns.
	Feature string
	// PromptTokens and Window are a ContextLength error's counts, as the
	// server gave them (0 when it did not).
	PromptTokens, Window int
	// Server names the server the error's wording comes from ("ollama",
	// "vllm", "llama.cpp", "" when unknown), for advice.
	Server string
	// Embeddings marks an embeddings call's error, whose advice names the
	// embed settings, not the chat model's.
	Embeddings bool
}

// Error describes the failure and says what to do about it.
func (e *Error) Error() string {
	if e.Kind == Config {
		return "llm: " + e.Message
	}
	what, advice := e.parts()
	s := "llm: " + what
	if detail := e.detail(); detail != "" {
		s += " (" + detail + ")"
	}
	if advice != "" {
		s += ": " + advice
	}
	return s
}

// Advice is what the error says to do about it ("" when nothing).
func (e *Error) Advice() string {
	if e.Kind == Config {
		return ""
	}
	_, advice := e.parts()
	return advice
}

// parts are the account of what failed and the advice.
func (e *Error) parts() (what, advice string) {
	where := e.Provider + " at " + e.URL
	switch e.Kind {
	case Unreachable:
		what = "no answer from " + where
		advice = e.unreachableAdvice()
	case Timeout:
		what = where + " did not answer in time"
		advice = "the model may still be loading or be too slow for this machine; try again, or set CYAN_LLM_MODEL to a smaller model"
	case Auth:
		what = where + " refused the API key"
		advice = "set CYAN_LLM_API_KEY (llm.api_key) to a valid key for " + e.Provider
	case ModelNotFound:
		what = "model " + e.modelName() + " not found at " + where
		advice = e.modelAdvice()
	case RateLimited:
		what = "rate limited by " + where
		advice = "wait a little and try again, or send fewer requests"
		if e.RetryAfter > 0 {
			advice = "the provider asks to retry in " + e.RetryAfter.Round(time.Second).String()
		}
	case Quota:
		what = "quota exhausted at " + where
		advice = "check the account's plan and billing with the provider, or point CYAN_LLM_PROVIDER and CYAN_LLM_BASE_URL at another endpoint"
	case BadRequest:
		what = where + " rejected the request for model " + e.modelName()
		advice = "the model or server may not support a feature the request used (tools, JSON schema output, reasoning); check CYAN_LLM_MODEL and the server's log"
		if e.Embeddings {
			advice = "the embedding model refused the texts (check that embed.model is an embedding model, and the server's log)"
		}
		if e.Status == 404 {
			advice = "check CYAN_LLM_BASE_URL (llm.base_url): OpenAI-compatible servers usually end in /v1, e.g. http://127.0.0.1:11434/v1"
		}
	case ContextLength:
		what = "the prompt does not fit the window of model " + e.modelName() + " at " + where
		advice = e.contextAdvice()
	case Unsupported:
		what = "model " + e.modelName() + " at " + where + " does not support " + featureName(e.Feature)
		advice = e.unsupportedAdvice()
	case Server:
		what = where + " failed"
		advice = "the server had a problem; try again later or check its log"
		if e.RetryAfter > 0 {
			advice = "the server asks to retry in " + e.RetryAfter.Round(time.Second).String()
		}
	case BadResponse:
		what = "unreadable answer from " + where
		advice = "check that CYAN_LLM_PROVIDER and CYAN_LLM_BASE_URL name a server that speaks this protocol"
	default:
		what = "call to " + where + " failed"
	}
	return what, advice
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of the *Error in err's chain, or "" when there is
// none (the caller's context ended, or err is not from this package).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// temporary reports whether the call may succeed if tried again.
func (e *Error) temporary() bool {
	switch e.Kind {
	case Unreachable, Timeout, RateLimited, Server:
		return true
	}
	return false
}

func (e *Error) detail() string {
	msg := oneLine(e.Message, 300)
	if msg == "" && e.Err != nil && e.Kind != Unreachable && e.Kind != Timeout {
		msg = oneLine(e.Err.Error(), 300)
	}
	switch {
	case e.Status != 0 && msg != "":
		return "HTTP " + strconv.Itoa(e.Status) + ": " + msg
	case e.Status != 0:
		return "HTTP " + strconv.Itoa(e.Status)
	}
	return msg
}

func (e *Error) modelName() string {
	if e.Model == "" {
		return "(none)"
	}
	return strconv.Quote(e.Model)
}

func (e *Error) looksLikeOllama() bool {
	u, err := url.Parse(e.URL)
	if err != nil {
		return false
	}
	return u.Port() == "11434" || strings.Contains(strings.ToLower(u.Host), "ollama")
}

func (e *Error) looksLocal() bool {
	u, err := url.Parse(e.URL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1"
}

func (e *Error) unreachableAdvice() string {
	switch {
	case e.looksLikeOllama():
		return "start Ollama (ollama serve) or set CYAN_LLM_BASE_URL to a running OpenAI-compatible server"
	case e.looksLocal():
		return "start the model server or set CYAN_LLM_BASE_URL to a running " + e.protocolName() + " server"
	}
	return "check the network connection and CYAN_LLM_BASE_URL (llm.base_url)"
}

func (e *Error) protocolName() string {
	if e.Provider == "anthropic" {
		return "Anthropic-compatible"
	}
	return "OpenAI-compatible"
}

func (e *Error) modelAdvice() string {
	set := "set CYAN_LLM_MODEL (llm.model) to a model the server offers"
	if e.looksLikeOllama() && e.Model != "" && e.Provider != "anthropic" {
		return "run `ollama pull " + e.Model + "`, or " + set
	}
	return set + " (it lists them at " + strings.TrimSuffix(e.URL, "/") + modelsPath(e.Provider) + ")"
}

func modelsPath(provider string) string {
	if provider == "anthropic" {
		return "/v1/models"
	}
	return "/models"
}

// oneLine collapses whitespace and cuts s to at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// apiError is an error body as the providers send it.
type apiError struct {
	Message string
	Type    string
	Code    string
}

// parseErrorBody reads the error shapes providers use:
// {"error": {"message", "type", "code"}} (OpenAI, Anthropic, Ollama),
// {"error": "text"} (Ollama, llama.cpp), {"message", "type", "code"} (vLLM)
// and {"detail": "text"}; anything else is kept as text.
func parseErrorBody(body []byte) apiError {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Detail  json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal(body, &env); err == nil {
		if len(env.Error) > 0 && string(env.Error) != "null" {
			var s string
			if json.Unmarshal(env.Error, &s) == nil {
				return apiError{Message: s}
			}
			var obj struct {
				Message string          `json:"message"`
				Type    string          `json:"type"`
				Code    json.RawMessage `json:"code"`
			}
			if json.Unmarshal(env.Error, &obj) == nil {
				return apiError{Message: obj.Message, Type: obj.Type, Code: rawText(obj.Code)}
			}
		}
		if env.Message != "" {
			return apiError{Message: env.Message, Type: env.Type, Code: rawText(env.Code)}
		}
		if d := rawText(env.Detail); d != "" {
			return apiError{Message: d}
		}
	}
	return apiError{Message: oneLine(string(body), 300)}
}

// rawText renders a JSON string, number or other value as plain text.
func rawText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// classify picks the Kind for an HTTP status (0 for an error event inside a
// stream) and the provider's error body.
func classify(status int, ae apiError) Kind {
	msg := strings.ToLower(ae.Message)
	code := strings.ToLower(ae.Code)
	typ := strings.ToLower(ae.Type)
	switch {
	case status == 402, code == "insufficient_quota", typ == "insufficient_quota",
		strings.Contains(msg, "credit balance is too low"):
		return Quota
	case isModelNotFound(status, msg, code, typ):
		return ModelNotFound
	}
	switch {
	case status == 401 || status == 403:
		return Auth
	case status == 408:
		return Timeout
	case status == 429:
		return RateLimited
	case status >= 500:
		return Server
	case status >= 300:
		return BadRequest
	}
	// No usable status: an error event inside a 200 stream.
	switch {
	case strings.Contains(typ, "authentication") || strings.Contains(typ, "permission"):
		return Auth
	case strings.Contains(typ, "rate_limit") || strings.Contains(code, "rate_limit"):
		return RateLimited
	case strings.Contains(typ, "invalid_request"):
		return BadRequest
	}
	return Server
}

func isModelNotFound(status int, msg, code, typ string) bool {
	if code == "model_not_found" {
		return true
	}
	if status != 0 && status != 400 && status != 404 {
		return false
	}
	if typ == "not_found_error" && strings.HasPrefix(msg, "model:") {
		return true // Anthropic: {"type": "not_found_error", "message": "model: x"}
	}
	return strings.Contains(msg, "model") &&
		(strings.Contains(msg, "not found") || strings.Contains(msg, "does not exist"))
}

// describeCause gives a short, user-level account of a transport error.
func describeCause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	s := err.Error()
	for _, known := range []string{"connection refused", "connection reset by peer", "no such host",
		"network is unreachable", "no route to host"} {
		if strings.Contains(s, known) {
			return known
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "connection closed by the server"
	}
	return oneLine(s, 200)
}
