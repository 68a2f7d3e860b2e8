package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/llm"
)

// llmNatural runs the LLM-backed steps of the parts (memory's remember,
// compress and context_operation) as one plain call each: the instruction
// and the step's JSON schema as the system prompt, the input as the user
// message, JSON-schema output requested. The JSON is taken from the answer
// even when a model wraps it in prose or a code fence.
type llmNatural struct{ client llm.Client }

func (n llmNatural) Ask(ctx context.Context, name, instruction, input string, schema json.RawMessage, out any) error {
	system := instruction + "\n\nAnswer with one JSON object matching this schema, and nothing else:\n" + string(schema)
	resp, err := n.client.Chat(ctx, llm.Request{
		Messages:       []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: input}},
		ResponseFormat: &llm.ResponseFormat{Name: name, Schema: schema},
		Temperature:    ptr(0.2),
	})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	raw := extractJSON(resp.Content)
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		return fmt.Errorf("%s: the model's answer is not the JSON asked for: %v", name, err)
	}
	return nil
}

// extractJSON returns the outermost {...} of s (inside a code fence or
// prose), or s itself.
func extractJSON(s string) string {
	start := strings.IndexByte(s, '{')
	end := strings.LastIndexByte(s, '}')
	if start < 0 || end < start {
		return s
	}
	return s[start : end+1]
}

func ptr[T any](v T) *T { return &v }
