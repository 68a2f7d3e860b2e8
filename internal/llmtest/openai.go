package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/llm"
)

// openAIRequest is the part of a chat-completions request the fake reads.
type openAIRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		Name       string          `json:"name"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// decodeOpenAI fills req from its body and returns what the real API would
// reject, or "".
func decodeOpenAI(req *Request) string {
	var w openAIRequest
	if err := json.Unmarshal(req.Body, &w); err != nil {
		return "We could not parse the JSON body of your request: " + err.Error()
	}
	req.Model, req.Stream = w.Model, w.Stream
	req.ResponseFormat = w.ResponseFormat
	req.MaxTokens = w.MaxTokens
	if req.MaxTokens == 0 {
		req.MaxTokens = w.MaxCompletionTokens
	}
	var system []string
	calls := map[string]bool{}
	for i, m := range w.Messages {
		content, err := textContent(m.Content)
		if err != nil {
			return fmt.Sprintf("messages[%d].content: %v", i, err)
		}
		lm := llm.Message{Role: llm.Role(m.Role), Content: content, ToolCallID: m.ToolCallID, ToolName: m.Name}
		if lm.Images, err = imageParts(m.Content); err != nil {
			return fmt.Sprintf("messages[%d].content: %v", i, err)
		}
		switch m.Role {
		case "system", "developer":
			lm.Role = llm.RoleSystem
			system = append(system, content)
		case "user":
		case "assistant":
			for _, tc := range m.ToolCalls {
				if tc.Type != "function" {
					return fmt.Sprintf("messages[%d].tool_calls: type must be \"function\"", i)
				}
				calls[tc.ID] = true
				lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			}
		case "tool":
			if !calls[m.ToolCallID] {
				return fmt.Sprintf("messages[%d]: tool message answers unknown tool_call_id %q", i, m.ToolCallID)
			}
		default:
			return fmt.Sprintf("messages[%d].role: unknown role %q", i, m.Role)
		}
		req.Messages = append(req.Messages, lm)
	}
	req.System = strings.Join(system, "\n\n")
	for i, t := range w.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return fmt.Sprintf("tools[%d]: want type \"function\" and a function name", i)
		}
		req.Tools = append(req.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	switch {
	case w.Model == "":
		return "you must provide a model parameter"
	case len(w.Messages) == 0:
		return "messages must not be empty"
	}
	return ""
}

// textContent reads content given as a string, null, or text parts.
func textContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("want a string or an array of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// imageParts reads the image_url parts of a content array (data URLs only:
// the fake fetches nothing).
func imageParts(raw json.RawMessage) ([]llm.Image, error) {
	var parts []struct {
		Type     string `json:"type"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil, nil
	}
	var out []llm.Image
	for _, p := range parts {
		if p.Type != "image_url" {
			continue
		}
		if p.ImageURL == nil {
			return nil, fmt.Errorf("an image_url part without image_url")
		}
		meta, data, ok := strings.Cut(strings.TrimPrefix(p.ImageURL.URL, "data:"), ",")
		mime, b64 := strings.CutSuffix(meta, ";base64")
		if !ok || !b64 || !strings.HasPrefix(mime, "image/") {
			return nil, fmt.Errorf("image_url: want a data:image/…;base64, URL")
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("image_url: not base64")
		}
		out = append(out, llm.Image{MIME: mime, Data: b})
	}
	return out, nil
}

type openAIWriter struct{}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageOf(u llm.Usage) *oaUsage {
	return &oaUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
}

func (openAIWriter) plain(w http.ResponseWriter, req Request, rep Reply, n int) {
	msg := map[string]any{"role": "assistant", "content": rep.Text}
	if rep.Text == "" && len(rep.ToolCalls) > 0 {
		msg["content"] = nil
	}
	if rep.Reasoning != "" {
		msg["reasoning_content"] = rep.Reasoning
	}
	if len(rep.ToolCalls) > 0 {
		var calls []oaToolCall
		for _, tc := range rep.ToolCalls {
			var c oaToolCall
			c.ID, c.Type = tc.ID, "function"
			c.Function.Name, c.Function.Arguments = tc.Name, tc.Arguments
			calls = append(calls, c)
		}
		msg["tool_calls"] = calls
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":      fmt.Sprintf("chatcmpl-fake-%d", n),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": rep.FinishReason}},
		"usage":   usageOf(rep.Usage),
	})
}

func (openAIWriter) stream(sw *sseWriter, req Request, rep Reply, n int) {
	if rep.Server != "" {
		serverStream(sw, req, rep, n)
		return
	}
	var w openAIRequest
	json.Unmarshal(req.Body, &w)
	id := fmt.Sprintf("chatcmpl-fake-%d", n)
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) bool {
		return sw.event("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
	}
	if !chunk(map[string]any{"role": "assistant", "content": ""}, nil) {
		return
	}
	for _, c := range chunks(rep.Reasoning, rep.ChunkSize) {
		if !chunk(map[string]any{"reasoning_content": c}, nil) {
			return
		}
	}
	for _, c := range chunks(rep.Text, rep.ChunkSize) {
		if !chunk(map[string]any{"content": c}, nil) {
			return
		}
	}
	for i, tc := range rep.ToolCalls {
		var first oaToolCall
		first.Index, first.ID, first.Type = &i, tc.ID, "function"
		first.Function.Name = tc.Name
		if !chunk(map[string]any{"tool_calls": []oaToolCall{first}}, nil) {
			return
		}
		for _, f := range fragments(tc.Arguments, rep.ChunkSize) {
			var frag oaToolCall
			frag.Index = &i
			frag.Function.Arguments = f
			if !chunk(map[string]any{"tool_calls": []oaToolCall{frag}}, nil) {
				return
			}
		}
	}
	if !chunk(map[string]any{}, rep.FinishReason) {
		return
	}
	if w.StreamOptions != nil && w.StreamOptions.IncludeUsage {
		if !sw.event("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{}, "usage": usageOf(rep.Usage),
		}) {
			return
		}
	}
	sw.raw("", "[DONE]")
}
