package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/cyan-agent/cyan/llm"
)

// anthropicRequest is the part of a Messages request the fake reads.
type anthropicRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	Stream bool `json:"stream"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

// decodeAnthropic fills req from its body and returns what the real API
// would reject, or "".
func decodeAnthropic(req *Request) string {
	if req.Header.Get("anthropic-version") == "" {
		return "anthropic-version: header is required"
	}
	var w anthropicRequest
	if err := json.Unmarshal(req.Body, &w); err != nil {
		return "invalid JSON body: " + err.Error()
	}
	req.Model, req.Stream, req.MaxTokens = w.Model, w.Stream, w.MaxTokens
	system, err := textContent(w.System)
	if err != nil {
		return "system: " + err.Error()
	}
	req.System = system
	for i, t := range w.Tools {
		if t.Name == "" || len(t.InputSchema) == 0 {
			return fmt.Sprintf("tools.%d: name and input_schema are required", i)
		}
		req.Tools = append(req.Tools, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	switch {
	case w.Model == "":
		return "model: Field required"
	case w.MaxTokens <= 0:
		return "max_tokens: Field required"
	case len(w.Messages) == 0:
		return "messages: at least one message is required"
	}
	if t := w.Thinking; t != nil && t.Type == "enabled" {
		if t.BudgetTokens < 1024 {
			return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
		}
		if t.BudgetTokens >= w.MaxTokens {
			return "`max_tokens` must be greater than `thinking.budget_tokens`"
		}
	}
	var lastCalls map[string]bool
	for i, m := range w.Messages {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want {
			return fmt.Sprintf("messages.%d: roles must alternate between \"user\" and \"assistant\", starting with \"user\"", i)
		}
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return fmt.Sprintf("messages.%d.content: %v", i, err)
		}
		if len(blocks) == 0 {
			return fmt.Sprintf("messages.%d: all messages must have non-empty content", i)
		}
		if m.Role == "assistant" {
			lastCalls = map[string]bool{}
			lm := llm.Message{Role: llm.RoleAssistant}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					lm.Content += b.Text
				case "tool_use":
					if len(b.Input) == 0 || b.Input[0] != '{' {
						return fmt.Sprintf("messages.%d: tool_use.input must be an object", i)
					}
					lastCalls[b.ID] = true
					lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
				}
			}
			req.Messages = append(req.Messages, lm)
			continue
		}
		var text []string
		var images []llm.Image
		seenText := false
		for _, b := range blocks {
			switch b.Type {
			case "image":
				if b.Source == nil || b.Source.Type != "base64" || !strings.HasPrefix(b.Source.MediaType, "image/") {
					return fmt.Sprintf("messages.%d: image.source: want {type: base64, media_type: image/…, data}", i)
				}
				data, err := base64.StdEncoding.DecodeString(b.Source.Data)
				if err != nil {
					return fmt.Sprintf("messages.%d: image.source.data: not base64", i)
				}
				images = append(images, llm.Image{MIME: b.Source.MediaType, Data: data})
			case "text":
				if b.Text == "" {
					return fmt.Sprintf("messages.%d: text content blocks must be non-empty", i)
				}
				seenText = true
				text = append(text, b.Text)
			case "tool_result":
				if seenText {
					return fmt.Sprintf("messages.%d: tool_result blocks must come first in the content", i)
				}
				if !lastCalls[b.ToolUseID] {
					return fmt.Sprintf("messages.%d: unexpected tool_use_id %q in tool_result blocks: each tool_result must answer a tool_use of the previous message", i, b.ToolUseID)
				}
				content, err := textContent(b.Content)
				if err != nil {
					return fmt.Sprintf("messages.%d: tool_result.content: %v", i, err)
				}
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, Content: content, ToolCallID: b.ToolUseID})
			}
		}
		if len(text) > 0 || len(images) > 0 {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: strings.Join(text, "\n"), Images: images})
		}
		lastCalls = nil
	}
	return ""
}

// anthropicBlocks reads content given as a string or as blocks.
func anthropicBlocks(raw json.RawMessage) ([]anthropicBlock, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "" {
			return nil, nil
		}
		return []anthropicBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("want a string or an array of content blocks")
	}
	return blocks, nil
}

type anthropicWriter struct{}

// stopReason maps an OpenAI-style finish reason to Anthropic's.
func stopReason(finish string) string {
	switch finish {
	case "stop":
		return "end_turn"
	case "length":
		return "max_tokens"
	case "tool_calls":
		return "tool_use"
	}
	return finish
}

// toolInput is a tool call's arguments as an input object.
func toolInput(args string) json.RawMessage {
	if raw := json.RawMessage(strings.TrimSpace(args)); json.Valid(raw) && len(raw) > 0 && raw[0] == '{' {
		return raw
	}
	return json.RawMessage(`{}`)
}

func anthropicUsage(u llm.Usage) map[string]int {
	return map[string]int{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens}
}

func (anthropicWriter) plain(w http.ResponseWriter, req Request, rep Reply, n int) {
	content := []map[string]any{}
	if rep.Reasoning != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": rep.Reasoning, "signature": "fake-signature"})
	}
	if rep.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	for _, tc := range rep.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": toolInput(tc.Arguments)})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": fmt.Sprintf("msg_fake_%d", n), "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stopReason(rep.FinishReason), "stop_sequence": nil,
		"usage": anthropicUsage(rep.Usage),
	})
}

func (anthropicWriter) stream(sw *sseWriter, req Request, rep Reply, n int) {
	ev := func(typ string, v map[string]any) bool {
		v["type"] = typ
		return sw.event(typ, v)
	}
	if !ev("message_start", map[string]any{"message": map[string]any{
		"id": fmt.Sprintf("msg_fake_%d", n), "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": rep.Usage.InputTokens, "output_tokens": 1},
	}}) {
		return
	}
	if !ev("ping", map[string]any{}) {
		return
	}
	index := 0
	block := func(start map[string]any, deltas []map[string]any) bool {
		if !ev("content_block_start", map[string]any{"index": index, "content_block": start}) {
			return false
		}
		for _, d := range deltas {
			if !ev("content_block_delta", map[string]any{"index": index, "delta": d}) {
				return false
			}
		}
		ok := ev("content_block_stop", map[string]any{"index": index})
		index++
		return ok
	}
	if rep.Reasoning != "" {
		var ds []map[string]any
		for _, c := range chunks(rep.Reasoning, rep.ChunkSize) {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": c})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": "fake-signature"})
		if !block(map[string]any{"type": "thinking", "thinking": ""}, ds) {
			return
		}
	}
	if rep.Text != "" {
		var ds []map[string]any
		for _, c := range chunks(rep.Text, rep.ChunkSize) {
			ds = append(ds, map[string]any{"type": "text_delta", "text": c})
		}
		if !block(map[string]any{"type": "text", "text": ""}, ds) {
			return
		}
	}
	for _, tc := range rep.ToolCalls {
		var ds []map[string]any
		for _, f := range fragments(tc.Arguments, rep.ChunkSize) {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": f})
		}
		if !block(map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}, ds) {
			return
		}
	}
	if !ev("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stopReason(rep.FinishReason), "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": rep.Usage.OutputTokens},
	}) {
		return
	}
	ev("message_stop", map[string]any{})
}
