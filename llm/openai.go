package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// openAI speaks the OpenAI chat-completions protocol, which Ollama,
// llama.cpp, vLLM, LM Studio and most hosted APIs also serve.
type openAI struct{ c *conn }

var _ protocol = (*openAI)(nil)

// setHeaders adds the bearer token, when there is a key.
func (o *openAI) setHeaders(h http.Header) {
	if o.c.apiKey != "" {
		h.Set("Authorization", "Bearer "+o.c.apiKey)
	}
}

func (o *openAI) chatPath() string   { return "/chat/completions" }
func (o *openAI) modelsPath() string { return "/models" }

// readStream reads a chat-completions event stream.
func (o *openAI) readStream(r io.Reader, model string, emit func(Delta) error) (*Response, error) {
	st := &oaStream{c: o.c, model: model, emit: emit}
	if err := st.read(r); err != nil {
		return nil, err
	}
	return st.response(), nil
}

// listModels reads the {"data": [{"id": …}]} list both protocols use.
func listModels(ctx context.Context, c *conn, path string) ([]string, error) {
	var ids []string
	x := exchange{method: http.MethodGet, path: path, model: c.model}
	err := c.call(ctx, x, func(b []byte) error {
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &list); err != nil {
			return c.badResponse(c.model, fmt.Errorf("model list: %w", err))
		}
		ids = ids[:0]
		for _, m := range list.Data {
			ids = append(ids, m.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// Wire types of the request.

type oaRequest struct {
	Model           string         `json:"model"`
	Messages        []oaMessage    `json:"messages"`
	Tools           []oaTool       `json:"tools,omitempty"`
	Temperature     *float64       `json:"temperature,omitempty"`
	MaxTokens       int            `json:"max_tokens,omitempty"`
	ResponseFormat  *oaResponseFmt `json:"response_format,omitempty"`
	ReasoningEffort string         `json:"reasoning_effort,omitempty"`
	// ChatTemplateKwargs turns Qwen 3's thinking off on vLLM and llama.cpp.
	ChatTemplateKwargs map[string]any   `json:"chat_template_kwargs,omitempty"`
	Stream             bool             `json:"stream,omitempty"`
	StreamOptions      *oaStreamOptions `json:"stream_options,omitempty"`
}

type oaStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaMessage struct {
	Role string `json:"role"`
	// Content is a string, null for a tool-calling assistant without text,
	// or text and image_url parts for a user message with images.
	Content    any          `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"` // streamed fragments only
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments oaArgs `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type oaResponseFmt struct {
	Type       string `json:"type"`
	JSONSchema struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict bool            `json:"strict,omitempty"`
	} `json:"json_schema"`
}

// emptySchema is the parameters of a tool that takes none.
const emptySchema = `{"type":"object","properties":{}}`

func (o *openAI) encode(req Request, model string, stream bool) ([]byte, error) {
	w := oaRequest{
		Model:       model,
		Messages:    make([]oaMessage, 0, len(req.Messages)),
		Temperature: req.Temperature,
		MaxTokens:   req.MaxTokens,
		Stream:      stream,
	}
	if stream {
		w.StreamOptions = &oaStreamOptions{IncludeUsage: true}
	}
	for _, m := range req.Messages {
		content := m.Content
		om := oaMessage{Role: string(m.Role), Content: &content}
		if len(m.Images) > 0 && m.Role == RoleUser {
			om.Content = oaParts(content, m.Images)
		}
		switch m.Role {
		case RoleAssistant:
			for _, tc := range m.ToolCalls {
				var c oaToolCall
				c.ID, c.Type = tc.ID, "function"
				c.Function.Name = tc.Name
				c.Function.Arguments = oaArgs(tc.Arguments)
				if strings.TrimSpace(tc.Arguments) == "" {
					c.Function.Arguments = "{}"
				}
				om.ToolCalls = append(om.ToolCalls, c)
			}
			if len(om.ToolCalls) > 0 && content == "" {
				om.Content = nil
			}
		case RoleTool:
			om.ToolCallID = m.ToolCallID
		}
		w.Messages = append(w.Messages, om)
	}
	for _, t := range req.Tools {
		var ot oaTool
		ot.Type = "function"
		ot.Function.Name, ot.Function.Description = t.Name, t.Description
		ot.Function.Parameters = t.Parameters
		if len(bytes.TrimSpace(t.Parameters)) == 0 || string(t.Parameters) == "null" {
			ot.Function.Parameters = json.RawMessage(emptySchema)
		}
		w.Tools = append(w.Tools, ot)
	}
	if rf := req.ResponseFormat; rf != nil {
		f := &oaResponseFmt{Type: "json_schema"}
		f.JSONSchema.Name = rf.Name
		if f.JSONSchema.Name == "" {
			f.JSONSchema.Name = "response"
		}
		f.JSONSchema.Schema, f.JSONSchema.Strict = rf.Schema, rf.Strict
		w.ResponseFormat = f
	}
	switch req.Think {
	case ThinkLow, ThinkMedium, ThinkHigh:
		w.ReasoningEffort = string(req.Think)
	case ThinkOn:
		w.ReasoningEffort = string(ThinkMedium)
	case ThinkOff:
		switch o.c.thinkOffNow() {
		case thinkReasoningEffort:
			w.ReasoningEffort = "none"
		case thinkTemplateKwargs:
			w.ChatTemplateKwargs = map[string]any{"enable_thinking": false}
		}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, &Error{Kind: BadRequest, Provider: o.c.provider, URL: o.c.baseURL, Model: model,
			Message: "cannot encode the request (a tool schema or response schema is not valid JSON)", Err: err}
	}
	return b, nil
}

// oaPart is a content part of a user message.
type oaPart struct {
	Type     string      `json:"type"`
	Text     string      `json:"text,omitempty"`
	ImageURL *oaImageURL `json:"image_url,omitempty"`
}

type oaImageURL struct {
	URL string `json:"url"`
}

// oaParts is a user message's text followed by its images as data URLs.
func oaParts(text string, imgs []Image) []oaPart {
	parts := []oaPart{{Type: "text", Text: text}}
	for _, im := range imgs {
		parts = append(parts, oaPart{Type: "image_url", ImageURL: &oaImageURL{URL: "data:" + im.MIME + ";base64," + base64.StdEncoding.EncodeToString(im.Data)}})
	}
	return parts
}

// Wire types of the response.

type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

type oaRespMessage struct {
	Content          oaContent    `json:"content"`
	ReasoningContent string       `json:"reasoning_content"` // vLLM, DeepSeek
	Reasoning        string       `json:"reasoning"`         // Ollama, OpenRouter
	ToolCalls        []oaToolCall `json:"tool_calls"`
}

type oaResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Index        int           `json:"index"`
		Message      oaRespMessage `json:"message"`
		FinishReason string        `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage        `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (o *openAI) decode(b []byte, model string) (*Response, error) {
	var w oaResponse
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, o.c.badResponse(model, fmt.Errorf("decode chat completion: %w", err))
	}
	if len(w.Error) > 0 && string(w.Error) != "null" {
		return nil, o.c.streamError(model, b)
	}
	if len(w.Choices) == 0 {
		return nil, o.c.badResponse(model, fmt.Errorf("chat completion has no choices"))
	}
	ch := w.Choices[0]
	resp := &Response{FinishReason: ch.FinishReason, Model: w.Model}
	if resp.Model == "" {
		resp.Model = model
	}
	answer, thought := SplitThink(string(ch.Message.Content))
	resp.Content = answer
	field := ch.Message.ReasoningContent
	if field == "" {
		field = ch.Message.Reasoning
	}
	resp.Reasoning = joinReasoning(field, thought)
	for i, tc := range ch.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(i)
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: tc.Function.Name, Arguments: string(tc.Function.Arguments)})
	}
	if w.Usage != nil {
		resp.Usage = Usage{InputTokens: w.Usage.PromptTokens, OutputTokens: w.Usage.CompletionTokens}
	}
	return resp, nil
}

// oaContent is message content: a string, null, or (some servers) an
// array of {"type": "text", "text": …} parts.
type oaContent string

func (c *oaContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		*c = ""
		return nil
	}
	if b[0] == '"' {
		var s string
		err := json.Unmarshal(b, &s)
		*c = oaContent(s)
		return err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	var sb strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			sb.WriteString(p.Text)
		}
	}
	*c = oaContent(sb.String())
	return nil
}

// oaArgs is a tool call's arguments: a JSON string on the wire, though some
// servers send the object itself; either way it is kept as JSON text.
type oaArgs string

func (a oaArgs) MarshalJSON() ([]byte, error) { return json.Marshal(string(a)) }

func (a *oaArgs) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*a = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = oaArgs(s)
	default:
		*a = oaArgs(b)
	}
	return nil
}

// oaStream assembles a streamed chat completion.
type oaStream struct {
	c       *conn
	model   string
	emit    func(Delta) error
	think   thinkSplitter
	content strings.Builder
	reason  strings.Builder
	calls   []*ToolCall
	byIndex map[int]*ToolCall
	resp    Response
	chunks  int
}

type oaChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          oaContent    `json:"content"`
			ReasoningContent string       `json:"reasoning_content"`
			Reasoning        string       `json:"reasoning"`
			ToolCalls        []oaToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage        `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (s *oaStream) read(r io.Reader) error {
	rd := newSSEReader(r)
	err := rd.each(func(ev sseEvent) (bool, error) {
		var ch oaChunk
		if err := json.Unmarshal([]byte(ev.Data), &ch); err != nil {
			return false, s.c.badResponse(s.model, fmt.Errorf("decode stream chunk: %w", err))
		}
		if len(ch.Error) > 0 && string(ch.Error) != "null" || ev.Event == "error" {
			return false, s.c.streamError(s.model, []byte(ev.Data))
		}
		s.chunks++
		return false, s.chunk(&ch)
	})
	if err != nil {
		return err
	}
	if s.chunks == 0 {
		return s.c.badResponse(s.model, fmt.Errorf("the stream ended before its first chunk"))
	}
	if s.resp.FinishReason == "" && !rd.sawDone {
		return &CutError{Provider: s.c.provider, Model: s.model, Missing: "a finish reason or [DONE]"}
	}
	content, reasoning := s.think.flush()
	return s.out(content, reasoning)
}

func (s *oaStream) chunk(ch *oaChunk) error {
	if ch.Model != "" {
		s.resp.Model = ch.Model
	}
	if ch.Usage != nil {
		s.resp.Usage = Usage{InputTokens: ch.Usage.PromptTokens, OutputTokens: ch.Usage.CompletionTokens}
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		d := &c.Delta
		reasoning := d.ReasoningContent
		if reasoning == "" {
			reasoning = d.Reasoning
		}
		content, thought := s.think.feed(string(d.Content))
		if err := s.out(content, reasoning+thought); err != nil {
			return err
		}
		for _, tc := range d.ToolCalls {
			s.toolFragment(tc)
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			s.resp.FinishReason = *c.FinishReason
		}
	}
	return nil
}

func (s *oaStream) out(content, reasoning string) error {
	s.content.WriteString(content)
	s.reason.WriteString(reasoning)
	return s.emit(Delta{Content: content, Reasoning: reasoning})
}

// toolFragment adds one streamed piece of a tool call. Pieces are matched
// by index; servers that send no index start a new call with each new id.
func (s *oaStream) toolFragment(tc oaToolCall) {
	var call *ToolCall
	if tc.Index != nil {
		if s.byIndex == nil {
			s.byIndex = map[int]*ToolCall{}
		}
		call = s.byIndex[*tc.Index]
		if call == nil {
			call = &ToolCall{}
			s.byIndex[*tc.Index] = call
			s.calls = append(s.calls, call)
		}
	} else {
		if n := len(s.calls); n > 0 && (tc.ID == "" || s.calls[n-1].ID == tc.ID) {
			call = s.calls[n-1]
		} else {
			call = &ToolCall{}
			s.calls = append(s.calls, call)
		}
	}
	if tc.ID != "" {
		call.ID = tc.ID
	}
	if tc.Function.Name != "" && call.Name == "" {
		call.Name = tc.Function.Name
	}
	call.Arguments += string(tc.Function.Arguments)
}

func (s *oaStream) response() *Response {
	r := s.resp
	if r.Model == "" {
		r.Model = s.model
	}
	r.Content = s.content.String()
	r.Reasoning = strings.TrimSpace(s.reason.String())
	for i, c := range s.calls {
		tc := *c
		if tc.ID == "" {
			tc.ID = "call_" + strconv.Itoa(i)
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	return &r
}
