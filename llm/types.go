package llm

import (
	"context"
	"encoding/json"
)

// Role is the author of a message in a provider conversation.
type Role string

// The roles of Message.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one provider message. System messages may appear only before
// the first non-system message; providers that keep the system prompt apart
// (Anthropic) lift them out.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// Images go with a user message, for models that accept them: OpenAI
	// image_url parts (data URLs), Anthropic base64 image blocks.
	Images []Image `json:"images,omitempty"`
}

// Image is one picture in a user message.
type Image struct {
	MIME string `json:"mime"` // image/jpeg, image/png, image/gif, image/webp
	Data []byte `json:"-"`    // kept out of traces
	// Ref names where it came from ("images/qq/ab12….jpg"), for traces.
	Ref string `json:"ref,omitempty"`
}

// ToolCall is a function call made by the model. Arguments is the JSON text
// the model produced, kept verbatim (it may be invalid JSON).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a function offered to the model. Parameters is a JSON Schema
// object; nil means "no parameters".
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ResponseFormat asks for JSON output matching Schema, where the provider
// supports it.
type ResponseFormat struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict,omitempty"`
}

// Think is a reasoning hint. The zero value leaves the provider's default.
type Think string

// The Think hints. OpenAI-compatible servers get Low, Medium and High as
// reasoning_effort (On as medium), and Off in the form Options.ThinkOff
// chooses (reasoning_effort "none" for Ollama, chat_template_kwargs
// enable_thinking false for vLLM and llama.cpp). Anthropic gets a thinking
// budget for On, Low, Medium and High.
const (
	ThinkDefault Think = ""
	ThinkOff     Think = "off"
	ThinkOn      Think = "on"
	ThinkLow     Think = "low"
	ThinkMedium  Think = "medium"
	ThinkHigh    Think = "high"
)

// Request is one chat call.
type Request struct {
	Model          string          `json:"model,omitempty"` // "": the client's default model
	Messages       []Message       `json:"messages"`
	Tools          []Tool          `json:"tools,omitempty"`
	Temperature    *float64        `json:"temperature,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"` // 0: provider default
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
	Think          Think           `json:"think,omitempty"`
}

// Usage is the token accounting the provider reported (zero if it did not).
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Response is a finished chat call. Reasoning holds what the provider marked
// as reasoning (a reasoning field, or a leading <think>…</think> block); it is
// never part of Content.
type Response struct {
	Content      string     `json:"content"`
	Reasoning    string     `json:"reasoning,omitempty"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	FinishReason string     `json:"finish_reason,omitempty"` // "stop", "length", "tool_calls", …
	Usage        Usage      `json:"usage"`
	Model        string     `json:"model,omitempty"`
}

// Delta is one streamed fragment of a response. Tool-call fragments are
// assembled by the client and arrive whole in the final Response.
type Delta struct {
	Content   string
	Reasoning string
}

// Client is a configured provider.
type Client interface {
	// Chat runs one call and returns the whole response.
	Chat(ctx context.Context, req Request) (*Response, error)
	// Stream runs one call with streaming; onDelta sees the fragments in
	// order, and the assembled response is returned at the end. An error from
	// onDelta aborts the call and is returned.
	Stream(ctx context.Context, req Request, onDelta func(Delta) error) (*Response, error)
	// Models lists the models the endpoint offers.
	Models(ctx context.Context) ([]string, error)
	// Describe names the provider, endpoint and default model for messages.
	Describe() string
}
