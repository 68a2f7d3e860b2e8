package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// anthropic speaks Anthropic's Messages API.
type anthropic struct{ c *conn }

var _ protocol = (*anthropic)(nil)

const (
	anthropicVersion   = "2023-06-01"
	anthropicMaxTokens = 4096 // max_tokens is required; this when the request sets none
)

// thinkingBudget is the budget_tokens for each Think hint.
func thinkingBudget(t Think) int {
	switch t {
	case ThinkLow:
		return 1024
	case ThinkOn, ThinkMedium:
		return 4096
	case ThinkHigh:
		return 16384
	}
	return 0
}

func (a *anthropic) setHeaders(h http.Header) {
	if a.c.apiKey != "" {
		h.Set("x-api-key", a.c.apiKey)
	}
	h.Set("anthropic-version", anthropicVersion)
}

func (a *anthropic) chatPath() string   { return "/v1/messages" }
func (a *anthropic) modelsPath() string { return "/v1/models?limit=1000" }

// readStream reads a Messages event stream.
func (a *anthropic) readStream(r io.Reader, model string, emit func(Delta) error) (*Response, error) {
	st := &anStream{c: a.c, model: model, emit: emit, blocks: map[int]*anStreamBlock{}}
	if err := st.read(r); err != nil {
		return nil, err
	}
	return st.response(), nil
}

// Wire types of the request.

type anRequest struct {
	Model       string      `json:"model"`
	MaxTokens   int         `json:"max_tokens"`
	System      string      `json:"system,omitempty"`
	Messages    []anMessage `json:"messages"`
	Tools       []anTool    `json:"tools,omitempty"`
	Temperature *float64    `json:"temperature,omitempty"`
	Thinking    *anThinking `json:"thinking,omitempty"`
	Stream      bool        `json:"stream,omitempty"`
}

type anThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anBlock struct {
	Type      string          `json:"type"`
	Source    *anSource       `json:"source,omitempty"` // image blocks
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

// anSource is an image block's data.
type anSource struct {
	Type      string `json:"type"` // base64
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func (a *anthropic) encode(req Request, model string, stream bool) ([]byte, error) {
	w := anRequest{
		Model:       model,
		MaxTokens:   req.MaxTokens,
		Temperature: req.Temperature,
		Stream:      stream,
	}
	if w.MaxTokens <= 0 {
		w.MaxTokens = anthropicMaxTokens
	}
	var system []string
	for _, m := range req.Messages {
		if m.Role == RoleSystem {
			if s := strings.TrimSpace(m.Content); s != "" {
				system = append(system, m.Content)
			}
			continue
		}
		w.Messages = appendMerged(w.Messages, a.message(m, model))
	}
	for i := range w.Messages {
		if w.Messages[i].Role == "user" {
			// tool_result blocks must lead a user message.
			slices.SortStableFunc(w.Messages[i].Content, func(x, y anBlock) int {
				return boolRank(y.Type == "tool_result") - boolRank(x.Type == "tool_result")
			})
		}
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(bytes.TrimSpace(schema)) == 0 || string(schema) == "null" {
			schema = json.RawMessage(emptySchema)
		}
		w.Tools = append(w.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if rf := req.ResponseFormat; rf != nil {
		// The Messages API has no JSON-schema mode: ask in the system prompt.
		a.c.log.Debug("llm: anthropic has no response_format; asking for JSON in the system prompt", "model", model)
		system = append(system, "Answer with a single JSON value, and nothing else, that matches this JSON Schema:\n"+string(rf.Schema))
	}
	w.System = strings.Join(system, "\n\n")
	if budget := thinkingBudget(req.Think); budget > 0 {
		if midToolLoop(req.Messages) {
			// Thinking with tool use needs the signed thinking blocks of the
			// previous turn sent back, which Message does not keep.
			a.c.log.Debug("llm: thinking left off mid tool loop", "model", model)
		} else {
			w.Thinking = &anThinking{Type: "enabled", BudgetTokens: budget}
			w.MaxTokens += budget
			if w.Temperature != nil {
				a.c.log.Debug("llm: temperature dropped: anthropic does not allow it with thinking", "model", model)
				w.Temperature = nil
			}
		}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, &Error{Kind: BadRequest, Provider: a.c.provider, URL: a.c.baseURL, Model: model,
			Message: "cannot encode the request (a tool schema is not valid JSON)", Err: err}
	}
	return b, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// message converts one non-system message to Anthropic blocks.
func (a *anthropic) message(m Message, model string) anMessage {
	switch m.Role {
	case RoleAssistant:
		am := anMessage{Role: "assistant"}
		if strings.TrimSpace(m.Content) != "" {
			am.Content = append(am.Content, anBlock{Type: "text", Text: m.Content})
		}
		for _, tc := range m.ToolCalls {
			input := json.RawMessage(strings.TrimSpace(tc.Arguments))
			if len(input) == 0 || !json.Valid(input) || input[0] != '{' {
				if len(input) > 0 {
					a.c.log.Debug("llm: tool call arguments are not a JSON object; sent as {}", "tool", tc.Name, "model", model)
				}
				input = json.RawMessage(`{}`)
			}
			am.Content = append(am.Content, anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input})
		}
		return am
	case RoleTool:
		return anMessage{Role: "user", Content: []anBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}}}
	}
	um := anMessage{Role: "user"}
	for _, im := range m.Images { // images first, as Anthropic advises
		um.Content = append(um.Content, anBlock{Type: "image", Source: &anSource{Type: "base64", MediaType: im.MIME, Data: base64.StdEncoding.EncodeToString(im.Data)}})
	}
	if strings.TrimSpace(m.Content) != "" {
		um.Content = append(um.Content, anBlock{Type: "text", Text: m.Content})
	}
	return um
}

// appendMerged appends m, merging it into the last message when both have
// the same role (Anthropic wants user and assistant to alternate). Messages
// without content are dropped.
func appendMerged(ms []anMessage, m anMessage) []anMessage {
	if len(m.Content) == 0 {
		return ms
	}
	if n := len(ms); n > 0 && ms[n-1].Role == m.Role {
		ms[n-1].Content = append(ms[n-1].Content, m.Content...)
		return ms
	}
	return append(ms, m)
}

// midToolLoop reports whether the conversation continues an assistant turn
// that called tools: an assistant message with tool calls comes after the
// last user message.
func midToolLoop(ms []Message) bool {
	for i := len(ms) - 1; i >= 0; i-- {
		switch ms[i].Role {
		case RoleUser:
			return false
		case RoleAssistant:
			if len(ms[i].ToolCalls) > 0 {
				return true
			}
		}
	}
	return false
}

// Wire types of the response.

type anUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (u anUsage) input() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

type anRespBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
}

type anResponse struct {
	Type       string          `json:"type"`
	Model      string          `json:"model"`
	Content    []anRespBlock   `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      anUsage         `json:"usage"`
	Error      json.RawMessage `json:"error"`
}

// finishReason maps Anthropic's stop_reason to the OpenAI-style names
// Response uses.
func finishReason(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence":
		return "stop"
	case "max_tokens":
		return "length"
	case "tool_use":
		return "tool_calls"
	}
	return stop
}

func (a *anthropic) decode(b []byte, model string) (*Response, error) {
	var w anResponse
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, a.c.badResponse(model, fmt.Errorf("decode message: %w", err))
	}
	if w.Type == "error" || len(w.Error) > 0 && string(w.Error) != "null" {
		return nil, a.c.streamError(model, b)
	}
	resp := &Response{Model: w.Model, FinishReason: finishReason(w.StopReason),
		Usage: Usage{InputTokens: w.Usage.input(), OutputTokens: w.Usage.OutputTokens}}
	if resp.Model == "" {
		resp.Model = model
	}
	var text, thinking strings.Builder
	for _, bl := range w.Content {
		switch bl.Type {
		case "text":
			text.WriteString(bl.Text)
		case "thinking":
			thinking.WriteString(bl.Thinking)
		case "tool_use":
			args := string(bytes.TrimSpace(bl.Input))
			if args == "" || args == "null" {
				args = "{}"
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: bl.ID, Name: bl.Name, Arguments: args})
		}
	}
	answer, thought := SplitThink(text.String())
	resp.Content = answer
	resp.Reasoning = joinReasoning(thinking.String(), thought)
	return resp, nil
}

// anStream assembles a streamed message.
type anStream struct {
	c       *conn
	model   string
	emit    func(Delta) error
	think   thinkSplitter
	content strings.Builder
	reason  strings.Builder
	blocks  map[int]*anStreamBlock
	order   []int
	resp    Response
	started bool // message_start seen
	stopped bool // message_stop seen
}

type anStreamBlock struct {
	typ  string
	call ToolCall
}

type anEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Model string  `json:"model"`
		Usage anUsage `json:"usage"`
	} `json:"message"`
	Index        int          `json:"index"`
	ContentBlock *anRespBlock `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anUsage `json:"usage"`
}

func (s *anStream) read(r io.Reader) error {
	err := newSSEReader(r).each(func(ev sseEvent) (bool, error) {
		var e anEvent
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return false, s.c.badResponse(s.model, fmt.Errorf("decode stream event: %w", err))
		}
		typ := e.Type
		if typ == "" {
			typ = ev.Event
		}
		if typ == "error" {
			return false, s.c.streamError(s.model, []byte(ev.Data))
		}
		return s.event(typ, &e)
	})
	if err != nil {
		return err
	}
	if !s.started {
		return s.c.badResponse(s.model, fmt.Errorf("the stream ended before message_start"))
	}
	if !s.stopped {
		return &CutError{Provider: s.c.provider, Model: s.model, Missing: "message_stop"}
	}
	content, reasoning := s.think.flush()
	return s.out(content, reasoning)
}

// event applies one stream event; stop is true at message_stop.
func (s *anStream) event(typ string, e *anEvent) (stop bool, err error) {
	switch typ {
	case "message_start":
		s.started = true
		if e.Message != nil {
			s.resp.Model = e.Message.Model
			s.resp.Usage.InputTokens = e.Message.Usage.input()
			s.resp.Usage.OutputTokens = e.Message.Usage.OutputTokens
		}
	case "content_block_start":
		b := &anStreamBlock{}
		if cb := e.ContentBlock; cb != nil {
			b.typ = cb.Type
			if cb.Type == "tool_use" {
				b.call = ToolCall{ID: cb.ID, Name: cb.Name}
			}
			if cb.Text != "" || cb.Thinking != "" {
				content, reasoning := s.think.feed(cb.Text)
				if err := s.out(content, cb.Thinking+reasoning); err != nil {
					return false, err
				}
			}
		}
		if _, ok := s.blocks[e.Index]; !ok {
			s.order = append(s.order, e.Index)
		}
		s.blocks[e.Index] = b
	case "content_block_delta":
		if e.Delta == nil {
			return false, nil
		}
		switch e.Delta.Type {
		case "text_delta":
			content, reasoning := s.think.feed(e.Delta.Text)
			return false, s.out(content, reasoning)
		case "thinking_delta":
			return false, s.out("", e.Delta.Thinking)
		case "input_json_delta":
			if b := s.blocks[e.Index]; b != nil {
				b.call.Arguments += e.Delta.PartialJSON
			}
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			s.resp.FinishReason = finishReason(e.Delta.StopReason)
		}
		if e.Usage != nil {
			if n := e.Usage.input(); n > 0 {
				s.resp.Usage.InputTokens = n
			}
			if e.Usage.OutputTokens > 0 {
				s.resp.Usage.OutputTokens = e.Usage.OutputTokens
			}
		}
	case "message_stop":
		s.stopped = true
		return true, nil
	}
	// ping, content_block_stop, signature deltas and unknown events: nothing.
	return false, nil
}

func (s *anStream) out(content, reasoning string) error {
	s.content.WriteString(content)
	s.reason.WriteString(reasoning)
	return s.emit(Delta{Content: content, Reasoning: reasoning})
}

func (s *anStream) response() *Response {
	r := s.resp
	if r.Model == "" {
		r.Model = s.model
	}
	r.Content = s.content.String()
	r.Reasoning = strings.TrimSpace(s.reason.String())
	for _, i := range s.order {
		b := s.blocks[i]
		if b.typ != "tool_use" {
			continue
		}
		tc := b.call
		if strings.TrimSpace(tc.Arguments) == "" {
			tc.Arguments = "{}"
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	return &r
}
