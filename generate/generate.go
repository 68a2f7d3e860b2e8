package generate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cyan-agent/cyan/llm"
)

// Identity is the agent a call speaks as: rendered "You are <Role>." and
// the description, into the system message. It is not a provider role.
type Identity struct {
	Role        string `json:"role,omitempty"`
	Description string `json:"description,omitempty"`
}

// ContextItem is one piece of selected context.
type ContextItem struct {
	Source string // where the value came from ("input.text", "message 0193…")
	Label  string // what it is for; "" uses Source. Reserved: system, assistant, tool, developer
	Value  any    // text as it is; anything else is rendered as JSON
	Budget int    // tokens; 0: no limit
}

// MaxAttempts bounds Request.Attempts.
const MaxAttempts = 10

// Request is one call.
type Request struct {
	// Name says what makes the call ("compress", a script's name); it
	// names the call in traces and errors.
	Name string
	// Site and File identify a script's generation site, for the trace.
	Site, File string
	// Channel is the conversation the call serves, "" if none.
	Channel string
	// Input is the instruction (required).
	Input    string
	Identity Identity
	// System is more system text after the identity (a script's system
	// messages, merged).
	System string
	// History holds earlier user and assistant messages, sent between the
	// system message and the instruction.
	History []llm.Message
	Context []ContextItem
	// Shape is the output's JSON Schema; nil asks for free text.
	Shape json.RawMessage
	// MaxOutput is the output budget in tokens (0: the provider's default).
	MaxOutput int
	// Attempts is the most tries in all (0: 1).
	Attempts    int
	Temperature *float64
	Think       Think
	Strict      bool
	// Debug logs the rendered prompt, each raw answer and its validation,
	// and warns about hints the provider ignores.
	Debug bool
}

// Result is a successful call.
type Result struct {
	// Value is the validated value, in the standard library's JSON types
	// (float64 numbers); for a call without a shape, the answer text.
	Value any
	// JSON is Value as JSON text.
	JSON json.RawMessage
	// Text is the answer the value came from, reasoning removed.
	Text      string
	Reasoning string
	Attempts  int
	TraceID   string // "" when no ring keeps traces
	Trace     *Trace
}

// Decode decodes the value into v.
func (r *Result) Decode(v any) error { return json.Unmarshal(r.JSON, v) }

// Options configure New.
type Options struct {
	LLM llm.Client
	// Traces keeps every call's trace; nil keeps none (results and errors
	// still carry theirs).
	Traces *Traces
	// Count counts tokens for context budgets; nil: a rough estimate.
	Count func(string) int
	// Now is the clock of traces (nil: time.Now).
	Now    func() time.Time
	Logger *slog.Logger // nil: discard
}

// Generator makes calls. It is safe for concurrent use.
type Generator struct {
	llm    llm.Client
	traces *Traces
	count  func(string) int
	now    func() time.Time
	log    *slog.Logger
	shapes shapeCache
	// noSchemaUntil (Unix nanoseconds) is set when the endpoint refuses a
	// JSON-schema request; until then the shape is only asked for in the
	// prompt, and after it schema output is tried again.
	noSchemaUntil atomic.Int64
}

// SchemaCooldown is how long a refusal of JSON-schema output keeps the
// shape in the prompt only; then schema output is tried again (the server
// may have been restarted or swapped, and one odd 400 must not leave a
// small model on prompt-only JSON for good).
const SchemaCooldown = 10 * time.Minute

// schemaOn reports whether schema output may be asked for now.
func (g *Generator) schemaOn() bool {
	until := g.noSchemaUntil.Load()
	return until == 0 || g.now().UnixNano() >= until
}

// New checks the options and returns a Generator.
func New(o Options) (*Generator, error) {
	if o.LLM == nil {
		return nil, errors.New("generate: no LLM client")
	}
	g := &Generator{llm: o.LLM, traces: o.Traces, count: o.Count, now: o.Now, log: o.Logger}
	if g.count == nil {
		g.count = roughCount
	}
	if g.now == nil {
		g.now = time.Now
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	return g, nil
}

// Traces is the ring the generator keeps traces in (nil if none).
func (g *Generator) Traces() *Traces { return g.traces }

// check validates a request before anything is sent.
func (req *Request) check() error {
	if strings.TrimSpace(req.Input) == "" {
		return errors.New("the instruction (input) is empty; say what to generate")
	}
	if req.Attempts < 0 || req.Attempts > MaxAttempts {
		return fmt.Errorf("attempts is %d; use 1 to %d", req.Attempts, MaxAttempts)
	}
	if req.MaxOutput < 0 {
		return fmt.Errorf("max_output is %d; use a positive number of tokens, or 0 for the provider's default", req.MaxOutput)
	}
	if t := req.Temperature; t != nil && (*t < 0 || *t > 2) {
		return fmt.Errorf("temperature %g is out of range 0–2", *t)
	}
	if _, err := ParseThink(string(req.Think)); err != nil {
		return err
	}
	for i, it := range req.Context {
		if err := CheckLabel(it.Label); err != nil {
			return fmt.Errorf("context item %d (%s): %w", i, it.Source, err)
		}
		if it.Budget < 0 {
			return fmt.Errorf("context item %d (%s): the budget must not be negative", i, it.Source)
		}
	}
	return nil
}

// Generate makes the call: render, ask, extract, validate, and retry a
// parse or validation failure while attempts remain. Its trace is kept
// whether it succeeds or not. Errors are *Error.
func (g *Generator) Generate(ctx context.Context, req Request) (*Result, error) {
	began := g.now()
	clock := time.Now()
	attempts := max(req.Attempts, 1)
	tr := &Trace{
		Kind: "generate", Name: req.Name, Site: req.Site, File: req.File, Channel: req.Channel, Time: began,
		Identity: req.Identity, Instruction: req.Input, Shape: req.Shape,
		Config: Config{MaxOutput: req.MaxOutput, Attempts: attempts, Temperature: req.Temperature,
			Think: ThinkFalse, Strict: req.Strict, Debug: req.Debug},
		Validation: Validation{Strict: req.Strict},
	}
	if p := llm.PacketOf(ctx); len(p) > 0 {
		tr.Packet = json.RawMessage(p)
	}
	if g.traces != nil {
		tr.ID = g.traces.newID(began)
	}
	fail := func(kind ErrorKind, err error) (*Result, error) {
		tr.Error = err.Error()
		tr.Millis = time.Since(clock).Milliseconds()
		g.keep(tr)
		return nil, &Error{Kind: kind, Name: req.Name, Site: req.Site, Attempts: len(tr.Attempts), TraceID: tr.ID, Trace: tr, Err: err}
	}
	if err := req.check(); err != nil {
		return fail(KindRequest, err)
	}
	tr.Config.Think = req.Think.norm()
	var shape *Shape
	if len(req.Shape) > 0 {
		s, err := g.shapes.get(req.Shape, req.Strict)
		if err != nil {
			return fail(KindRequest, err)
		}
		shape = s
	}
	tr.Context = renderContext(req.Context, g.count)
	tr.Messages = render(req, tr.Context, shape)

	lreq := llm.Request{Temperature: req.Temperature, MaxTokens: req.MaxOutput, Think: req.Think.LLM()}
	if shape != nil && shape.isObject() && g.schemaOn() {
		lreq.ResponseFormat = &llm.ResponseFormat{Name: formatName(req.Name), Schema: req.Shape}
	}
	if req.Debug {
		g.warn(tr, llm.Ignored(g.llm, lreq)...)
		g.log.Info("generate: prompt", "name", req.Name, "site", req.Site, "identity", req.Identity, "context", tr.Context,
			"messages", tr.Messages, "shape", string(req.Shape), "config", tr.Config)
	}

	conv := tr.Messages
	ctx = llm.WithStep(ctx, req.Name) // the calls count under the script's name
	var lastErr error
	for n := 1; n <= attempts; n++ {
		at := Attempt{N: n, Validation: Validation{Strict: req.Strict}}
		t0 := time.Now()
		lreq.Messages = conv
		resp, err := g.llm.Chat(ctx, lreq)
		if err != nil && lreq.ResponseFormat != nil && refusedSchema(err) {
			g.noSchemaUntil.Store(g.now().Add(SchemaCooldown).UnixNano())
			lreq.ResponseFormat = nil
			g.warn(tr, "the endpoint refused JSON-schema output ("+oneLine(err.Error())+"); the shape is asked for in the prompt for the next "+SchemaCooldown.String())
			resp, err = g.llm.Chat(ctx, lreq)
		}
		at.Millis = time.Since(t0).Milliseconds()
		if err != nil {
			at.Error = err.Error()
			tr.Attempts = append(tr.Attempts, at)
			return fail(KindLLM, err)
		}
		tr.SchemaMode = lreq.ResponseFormat != nil
		if tr.Model == "" {
			tr.Model = resp.Model
		}
		answer, thought := stripThink(resp.Content)
		at.Raw, at.Reasoning = resp.Content, joinText(resp.Reasoning, thought)
		at.FinishReason, at.Usage = resp.FinishReason, resp.Usage
		tr.Usage.InputTokens += resp.Usage.InputTokens
		tr.Usage.OutputTokens += resp.Usage.OutputTokens

		value, coerced, verr := g.validate(answer, shape)
		at.Validation.Coerced = coerced
		if req.Debug {
			g.log.Info("generate: answer", "name", req.Name, "attempt", n, "raw", resp.Content, "reasoning", at.Reasoning,
				"valid", verr == nil, "error", verr, "coerced", coerced)
		}
		if verr == nil {
			at.Validation.OK = true
			tr.Attempts = append(tr.Attempts, at)
			return g.succeed(tr, clock, value, answer, at.Reasoning)
		}
		lastErr = verr
		at.Validation.Error = verr.Error()
		if n < attempts {
			at.Feedback = feedback(verr, resp.FinishReason, shape)
			conv = append(conv[:len(conv):len(conv)],
				llm.Message{Role: llm.RoleAssistant, Content: echo(answer)},
				llm.Message{Role: llm.RoleUser, Content: at.Feedback})
		}
		tr.Attempts = append(tr.Attempts, at)
	}
	tr.Validation.Error = lastErr.Error()
	kind := KindValidation
	var pe *parseError
	if errors.As(lastErr, &pe) {
		kind = KindParse
	}
	return fail(kind, lastErr)
}

// validate checks one answer: against the shape, or, without one, that
// there is an answer at all.
func (g *Generator) validate(answer string, shape *Shape) (any, []string, error) {
	if shape == nil {
		if answer == "" {
			return nil, nil, &parseError{errEmpty}
		}
		return answer, nil, nil
	}
	return shape.check(answer)
}

func (g *Generator) succeed(tr *Trace, clock time.Time, value any, answer, reasoning string) (*Result, error) {
	v, raw, err := plain(value)
	if err != nil {
		v, raw = value, nil
	}
	tr.Validation.OK = true
	tr.Validation.Coerced = tr.Attempts[len(tr.Attempts)-1].Validation.Coerced
	tr.Result = raw
	tr.Reasoning = reasoning
	tr.Millis = time.Since(clock).Milliseconds()
	g.keep(tr)
	return &Result{Value: v, JSON: raw, Text: answer, Reasoning: reasoning, Attempts: len(tr.Attempts), TraceID: tr.ID, Trace: tr}, nil
}

// warn records notes in the trace and logs them as warnings. Hints the
// provider ignores are warned about only in debug mode (the seed's
// capability policy); a change of behaviour, such as leaving JSON-schema
// output, always.
func (g *Generator) warn(tr *Trace, notes ...string) {
	for _, n := range notes {
		tr.Warnings = append(tr.Warnings, n)
		g.log.Warn("generate: "+n, "name", tr.Name)
	}
}

// keep puts the trace in the ring; a failure to keep it is logged, never
// the call's failure.
func (g *Generator) keep(tr *Trace) {
	if g.traces == nil {
		return
	}
	if err := g.traces.Put(tr); err != nil {
		g.log.Warn("generate: keep trace", "id", tr.ID, "err", err)
	}
}

// refusedSchema reports whether err is the endpoint rejecting the request
// itself (400, 422), as servers without JSON-schema output do. A prompt
// too long for the window, a missing tool capability or a refused think
// hint is another matter (llm names them ContextLength and Unsupported)
// and leaves schema output on.
func refusedSchema(err error) bool {
	var le *llm.Error
	if !errors.As(err, &le) {
		return false
	}
	if le.Kind == llm.Unsupported {
		return le.Feature == "json_schema"
	}
	return le.Kind == llm.BadRequest && (le.Status == 400 || le.Status == 422)
}

var notName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// formatName is a response_format name made of the characters providers
// accept.
func formatName(name string) string {
	s := strings.Trim(notName.ReplaceAllString(name, "_"), "_")
	if s == "" {
		return "output"
	}
	return s[:min(len(s), 64)]
}

func joinText(a, b string) string {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}
