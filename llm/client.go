package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Options configures New.
type Options struct {
	// Provider is "openai" (the default: any OpenAI-compatible server such
	// as Ollama, llama.cpp, vLLM, LM Studio or a hosted API) or "anthropic".
	Provider string
	// BaseURL is the endpoint. openai: e.g. http://127.0.0.1:11434/v1 (the
	// default, a local Ollama); the client posts to BaseURL+"/chat/completions"
	// and lists BaseURL+"/models". anthropic: default https://api.anthropic.com;
	// a BaseURL that already ends in /v1 is accepted.
	BaseURL string
	// Model is used when Request.Model is "".
	Model  string
	APIKey string
	// Timeout bounds each try of a call as a whole, streamed or not: from
	// the request to the answer's last byte. Keep-alive comments in a
	// stream do not extend it. 0: 120s.
	Timeout time.Duration
	// FirstByteTimeout, when above 0 and below Timeout, bounds the wait for
	// the answer's first byte (a server that never starts fails sooner).
	FirstByteTimeout time.Duration
	// ThinkOff says how a request with ThinkOff asks an OpenAI-compatible
	// server not to think: "reasoning_effort" (reasoning_effort "none",
	// which Ollama's OpenAI layer maps to think false),
	// "chat_template_kwargs" ({"enable_thinking": false}, for Qwen 3 on
	// vLLM and llama.cpp), "none" (nothing is sent), or "" / "auto": the
	// first for an Ollama URL, the second for another local server, none
	// for a hosted API. A server that rejects the field is not sent it
	// again for ThinkOffCooldown.
	ThinkOff string
	// Now is the clock of the cooldowns (nil: time.Now).
	Now func() time.Time
	// MaxRetries is how many times a failed call is tried again (429, 5xx,
	// transport errors). 0: 2; negative: none.
	MaxRetries int
	HTTPClient *http.Client // nil: a new client
	Logger     *slog.Logger // nil: discard
	// Sleep waits between tries. nil: a timer that stops early when ctx ends.
	// Tests inject a recorder so they never sleep.
	Sleep func(ctx context.Context, d time.Duration) error
}

const (
	defaultOpenAIURL    = "http://127.0.0.1:11434/v1"
	defaultAnthropicURL = "https://api.anthropic.com"
	defaultTimeout      = 120 * time.Second
	defaultRetries      = 2

	maxErrorBody = 64 << 10 // bytes of an error body worth reading
	maxBody      = 64 << 20 // bytes of a non-streamed answer
)

// New returns a Client for opts.Provider. An unknown provider or an invalid
// BaseURL is a Config *Error that says what to set.
func New(opts Options) (Client, error) {
	provider := strings.ToLower(strings.TrimSpace(opts.Provider))
	base := defaultOpenAIURL
	switch provider {
	case "", "openai":
		provider = "openai"
	case "anthropic":
		base = defaultAnthropicURL
	default:
		return nil, &Error{Kind: Config, Provider: opts.Provider, Message: fmt.Sprintf(
			"unknown provider %q: set CYAN_LLM_PROVIDER (llm.provider) to openai (any OpenAI-compatible server) or anthropic",
			opts.Provider)}
	}
	if s := strings.TrimSpace(opts.BaseURL); s != "" {
		base = s
	}
	base, err := cleanBaseURL(base)
	if err != nil {
		return nil, &Error{Kind: Config, Provider: provider, URL: opts.BaseURL, Err: err, Message: fmt.Sprintf(
			"invalid base URL %q (%v): set CYAN_LLM_BASE_URL (llm.base_url) to an http(s) URL such as %s",
			opts.BaseURL, err, defaultOpenAIURL)}
	}
	c := &conn{
		provider: provider,
		baseURL:  base,
		model:    strings.TrimSpace(opts.Model),
		apiKey:   opts.APIKey,
		http:     opts.HTTPClient,
		log:      opts.Logger,
		sleep:    opts.Sleep,
		timeout:  opts.Timeout,
		first:    opts.FirstByteTimeout,
		retries:  opts.MaxRetries,
		now:      opts.Now,
	}
	if c.now == nil {
		c.now = time.Now
	}
	mode, err := thinkOffMode(opts.ThinkOff, provider, base)
	if err != nil {
		return nil, &Error{Kind: Config, Provider: provider, Message: err.Error()}
	}
	c.thinkOff = mode
	c.fillDefaults()
	var p protocol = &openAI{c: c}
	if provider == "anthropic" {
		c.baseURL = strings.TrimSuffix(c.baseURL, "/v1")
		p = &anthropic{c: c}
	}
	c.header = p.setHeaders
	return &client{c: c, p: p}, nil
}

// cleanBaseURL checks that s is an absolute http(s) URL and drops a
// trailing slash.
func cleanBaseURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("scheme must be http or https")
	}
	if u.Host == "" {
		return "", errors.New("no host")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("no query or fragment allowed")
	}
	return strings.TrimRight(s, "/"), nil
}

// conn is the HTTP side both providers share: timeouts, retries and the
// mapping of failures to *Error.
type conn struct {
	provider string
	baseURL  string
	model    string
	apiKey   string
	http     *http.Client
	log      *slog.Logger
	sleep    func(context.Context, time.Duration) error
	timeout  time.Duration
	first    time.Duration // first-byte timeout, 0: none
	retries  int
	now      func() time.Time
	header   func(http.Header) // provider headers (auth, version)
	thinkOff string            // thinkReasoningEffort, thinkTemplateKwargs or thinkNone
	features features          // what the server refused lately
}

// exchange is one HTTP call as the providers describe it.
type exchange struct {
	method string
	path   string // appended to the base URL
	root   bool   // path is appended to the server's root (the base URL without /v1)
	model  string // for errors and logs
	body   []byte // nil for GET
	stream bool
}

// Causes of an attempt's context ending that are ours, not the caller's.
var (
	errCallTimeout      = errors.New("llm: call timeout")
	errFirstByteTimeout = errors.New("llm: first byte timeout")
)

func (c *conn) describe() string {
	s := c.provider + " at " + c.baseURL
	if c.model != "" {
		s += ", model " + c.model
	}
	return s
}

// pickModel returns the request's model, or the default one.
func (c *conn) pickModel(m string) (string, error) {
	if m = strings.TrimSpace(m); m != "" {
		return m, nil
	}
	if c.model != "" {
		return c.model, nil
	}
	return "", &Error{Kind: Config, Provider: c.provider, URL: c.baseURL, Message: fmt.Sprintf(
		"no model chosen for %s at %s: set CYAN_LLM_MODEL (llm.model)", c.provider, c.baseURL)}
}

// call runs a non-streaming exchange with retries and hands the whole 2xx
// body to decode.
func (c *conn) call(ctx context.Context, x exchange, decode func([]byte) error) error {
	return c.withRetries(ctx, x, nil, func() error {
		return c.attempt(ctx, x, func(r io.Reader, _ string) error {
			body, err := c.readBody(r, x)
			if err != nil {
				return err
			}
			return decode(body)
		})
	})
}

func (c *conn) readBody(r io.Reader, x exchange) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxBody {
		return nil, c.badResponse(x.model, fmt.Errorf("answer larger than %d bytes", maxBody))
	}
	return body, nil
}

// callerError carries an error from the caller's onDelta through the
// retry loop untouched.
type callerError struct{ err error }

func (e *callerError) Error() string { return e.err.Error() }

// stream runs a streaming exchange. read parses one try's event stream and
// passes deltas to emit; a try is repeated only while no delta reached
// onDelta. A server that answers with plain JSON instead of a stream is
// read by whole, and its answer passed on as one delta.
func (c *conn) stream(ctx context.Context, x exchange,
	read func(r io.Reader, emit func(Delta) error) (*Response, error),
	whole func([]byte) (*Response, error),
	onDelta func(Delta) error,
) (*Response, error) {
	delivered := false
	emit := func(d Delta) error {
		if d.Content == "" && d.Reasoning == "" {
			return nil
		}
		delivered = true
		if onDelta == nil {
			return nil
		}
		if err := onDelta(d); err != nil {
			return &callerError{err}
		}
		return nil
	}
	var resp *Response
	err := c.withRetries(ctx, x, func() bool { return delivered }, func() error {
		return c.attempt(ctx, x, func(r io.Reader, contentType string) error {
			var err error
			if !strings.HasPrefix(contentType, "application/json") {
				resp, err = read(r, emit)
				return err
			}
			body, err := c.readBody(r, x)
			if err != nil {
				return err
			}
			if resp, err = whole(body); err != nil {
				return err
			}
			return emit(Delta{Content: resp.Content, Reasoning: resp.Reasoning})
		})
	})
	if ce, ok := err.(*callerError); ok {
		return nil, ce.err
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// attempt makes one HTTP request and hands a 2xx body to handle. The
// timeout bounds the whole attempt, the body's last byte included, so a
// stream kept open by keep-alive comments still ends on time.
func (c *conn) attempt(ctx context.Context, x exchange, handle func(r io.Reader, contentType string) error) error {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(c.timeout, func() { cancel(errCallTimeout) })
	defer timer.Stop()
	var first *time.Timer
	if c.first > 0 && c.first < c.timeout {
		first = time.AfterFunc(c.first, func() { cancel(errFirstByteTimeout) })
		defer first.Stop()
	}

	var body io.Reader
	if x.body != nil {
		body = bytes.NewReader(x.body)
	}
	req, err := http.NewRequestWithContext(actx, x.method, c.urlOf(x), body)
	if err != nil {
		return &Error{Kind: Config, Provider: c.provider, URL: c.baseURL, Err: err, Message: fmt.Sprintf(
			"cannot build a request to %s (%v): check CYAN_LLM_BASE_URL (llm.base_url)", c.baseURL, err)}
	}
	if x.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if x.stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if c.header != nil {
		c.header(req.Header)
	}
	c.log.Debug("llm: request", "provider", c.provider, "url", req.URL.String(), "model", x.model, "stream", x.stream)
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(ctx, actx, x, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return c.statusError(x, resp, b)
	}
	var r io.Reader = resp.Body
	if first != nil {
		r = &firstByteReader{r: resp.Body, t: first}
	}
	ct := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Type")))
	if err := handle(r, ct); err != nil {
		return c.readError(ctx, actx, x, err)
	}
	return nil
}

// urlOf is where an exchange goes.
func (c *conn) urlOf(x exchange) string {
	if x.root {
		return strings.TrimSuffix(c.baseURL, "/v1") + x.path
	}
	return c.baseURL + x.path
}

// firstByteReader stops the first-byte timer once the body has begun.
type firstByteReader struct {
	r io.Reader
	t *time.Timer
}

func (fr *firstByteReader) Read(p []byte) (int, error) {
	n, err := fr.r.Read(p)
	if n > 0 && fr.t != nil {
		fr.t.Stop()
		fr.t = nil
	}
	return n, err
}

// ctxError is what a call returns when the caller's context ended.
func (c *conn) ctxError(ctx context.Context) error {
	err := ctx.Err()
	if cause := context.Cause(ctx); cause != nil && cause != err {
		return fmt.Errorf("llm: %s call stopped: %w (%w)", c.provider, err, cause)
	}
	return fmt.Errorf("llm: %s call stopped: %w", c.provider, err)
}

func (c *conn) newError(kind Kind, model string, status int, msg string, err error) *Error {
	return &Error{Kind: kind, Provider: c.provider, URL: c.baseURL, Model: model, Status: status, Message: msg, Err: err}
}

func (c *conn) badResponse(model string, err error) *Error {
	return c.newError(BadResponse, model, 0, "", err)
}

// ourTimeout reports whether actx ended because of this package's timers.
// first is true for the first-byte timer.
func ourTimeout(actx context.Context) (first, ok bool) {
	switch context.Cause(actx) {
	case errCallTimeout:
		return false, true
	case errFirstByteTimeout:
		return true, true
	}
	return false, false
}

func (c *conn) timeoutError(model string, first bool, err error) *Error {
	msg := fmt.Sprintf("no complete answer within %s (llm.timeout bounds the whole call)", c.timeout)
	if first {
		msg = fmt.Sprintf("no response within %s (llm.first_byte_timeout)", c.first)
	}
	return c.newError(Timeout, model, 0, msg, err)
}

// transportError maps a failed http.Client.Do.
func (c *conn) transportError(ctx, actx context.Context, x exchange, err error) error {
	if ctx.Err() != nil {
		return c.ctxError(ctx)
	}
	if first, ok := ourTimeout(actx); ok {
		return c.timeoutError(x.model, first, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return c.timeoutError(x.model, false, err)
	}
	return c.newError(Unreachable, x.model, 0, describeCause(err), err)
}

// readError maps a failure while reading a 2xx body.
func (c *conn) readError(ctx, actx context.Context, x exchange, err error) error {
	var ce *callerError
	if errors.As(err, &ce) {
		return ce
	}
	if ctx.Err() != nil {
		return c.ctxError(ctx)
	}
	if first, ok := ourTimeout(actx); ok {
		return c.timeoutError(x.model, first, err)
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return c.newError(Unreachable, x.model, 0, "connection lost mid-answer: "+describeCause(err), err)
}

// statusError maps a non-2xx response.
func (c *conn) statusError(x exchange, resp *http.Response, body []byte) *Error {
	ae := parseErrorBody(body)
	if ae.Message == "" {
		ae.Message = http.StatusText(resp.StatusCode)
	}
	e := c.newError(classify(resp.StatusCode, ae), x.model, resp.StatusCode, ae.Message, nil)
	e.RetryAfter = parseRetryAfter(resp.Header, c.now())
	refine(e, ae)
	return e
}

// streamError maps an error event inside a stream.
func (c *conn) streamError(model string, data []byte) *Error {
	ae := parseErrorBody(data)
	e := c.newError(classify(0, ae), model, 0, ae.Message, nil)
	refine(e, ae)
	return e
}

// fillDefaults gives a connection the defaults of what its options left
// out: an HTTP client, a logger, the sleep between retries, the timeout
// and the retry count (a negative count is none).
func (c *conn) fillDefaults() {
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	if c.timeout <= 0 {
		c.timeout = defaultTimeout
	}
	switch {
	case c.retries == 0:
		c.retries = defaultRetries
	case c.retries < 0:
		c.retries = 0
	}
}
