package llm

import (
	"context"
	"strings"
)

// CheckResult is what Check found: whether the endpoint answers and lists
// its models, and whether the model answers a one-word request. It is
// JSON, so a running daemon can report the check of its own client.
type CheckResult struct {
	// Endpoint is the client's Describe().
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	// Unreachable: the endpoint did not answer at all.
	Unreachable bool `json:"unreachable,omitempty"`
	// Models are the listed models (ModelsError when the list failed).
	Models      []string `json:"models,omitempty"`
	ModelsError string   `json:"models_error,omitempty"`
	// Listed: Model is among Models (an Ollama ":latest" aside).
	Listed bool `json:"listed"`
	// Answered: the model answered; else ChatError says why.
	Answered     bool   `json:"answered"`
	ChatError    string `json:"chat_error,omitempty"`
	InputTokens  int    `json:"input_tokens,omitempty"`
	OutputTokens int    `json:"output_tokens,omitempty"`
}

// Check lists c's models and asks model for the single word "ok".
func Check(ctx context.Context, c Client, model string) CheckResult {
	r := CheckResult{Endpoint: c.Describe(), Model: model}
	models, err := c.Models(ctx)
	switch {
	case err != nil && KindOf(err) == Unreachable:
		r.Unreachable, r.ModelsError = true, err.Error()
		return r
	case err != nil:
		r.ModelsError = err.Error()
	default:
		r.Models = models
		for _, m := range models {
			if m == model || strings.TrimSuffix(m, ":latest") == strings.TrimSuffix(model, ":latest") {
				r.Listed = true
			}
		}
	}
	resp, err := c.Chat(ctx, Request{
		Messages:  []Message{{Role: RoleUser, Content: "Reply with the single word: ok"}},
		MaxTokens: 16,
	})
	if err != nil {
		r.ChatError = err.Error()
		return r
	}
	r.Answered, r.InputTokens, r.OutputTokens = true, resp.Usage.InputTokens, resp.Usage.OutputTokens
	return r
}
