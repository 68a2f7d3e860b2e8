package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// CheckResult is what Check found: whether the endpoint answers and lists
// its models, whether the model answers a one-word request, takes a tool
// and answers a JSON step, and the window the server gives it. It is JSON,
// so a running daemon can report the check of its own client.
type CheckResult struct {
	// Endpoint is the client's Describe().
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	Provider string `json:"provider,omitempty"`
	// Unreachable: the endpoint did not answer at all.
	Unreachable bool `json:"unreachable,omitempty"`
	// Models are the listed models (ModelsError when the list failed).
	Models      []string `json:"models,omitempty"`
	ModelsError string   `json:"models_error,omitempty"`
	// Listed: Model is among Models (an Ollama ":latest" aside, or an
	// alias such as claude-sonnet-4-5 of a dated id).
	Listed bool `json:"listed"`
	// Answered: the model answered; else ChatError says why.
	Answered     bool   `json:"answered"`
	ChatError    string `json:"chat_error,omitempty"`
	InputTokens  int    `json:"input_tokens,omitempty"`
	OutputTokens int    `json:"output_tokens,omitempty"`
	// Tools: the request offering one tool was accepted (ToolCalled: the
	// model called it); else ToolsError says why and what to do.
	Tools      bool   `json:"tools"`
	ToolCalled bool   `json:"tool_called,omitempty"`
	ToolsError string `json:"tools_error,omitempty"`
	ToolsFix   string `json:"tools_fix,omitempty"`
	// JSON: a JSON step (schema output, thinking off) came back as a JSON
	// object; else JSONError says why.
	JSON      bool   `json:"json"`
	JSONError string `json:"json_error,omitempty"`
	JSONFix   string `json:"json_fix,omitempty"`
	// Window is the server's window for the model, when it says
	// (WindowError when asking failed).
	Window      *Window `json:"window,omitempty"`
	WindowError string  `json:"window_error,omitempty"`
	// PromptTokens is the prompt a turn sends after a long conversation
	// (system prompt, tools' schemas and the full context budget), and
	// PromptParts the same by part, when the caller knows them (a
	// running daemon does).
	PromptTokens int    `json:"prompt_tokens,omitempty"`
	PromptParts  string `json:"prompt_parts,omitempty"`
}

// probeTool is the one tool the check offers.
var probeTool = Tool{Name: "note", Description: "Write a short note.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}

// probeShape is the JSON step's schema.
const probeShape = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`

// Check lists c's models, asks model for the single word "ok", offers it
// one tool, asks it for one JSON step as cyan's steps do (schema output,
// thinking off), and reads the server's window.
func Check(ctx context.Context, c Client, model string) CheckResult {
	r := CheckResult{Endpoint: c.Describe(), Model: model}
	if cl, ok := baseClient(c); ok {
		r.Provider = cl.c.provider
	}
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
			if ListedAs(m, model) {
				r.Listed = true
			}
		}
	}
	if w, err := ProbeWindow(ctx, c, model); err != nil {
		r.WindowError = err.Error()
	} else if w.Tokens > 0 || w.Server != "" {
		r.Window = &w
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

	resp, err = c.Chat(ctx, Request{
		Messages:  []Message{{Role: RoleUser, Content: `Call the note tool with the text "ok".`}},
		Tools:     []Tool{probeTool},
		MaxTokens: 64,
		Think:     ThinkOff,
	})
	if err != nil {
		r.ToolsError, r.ToolsFix = err.Error(), adviceOf(err)
	} else {
		r.Tools, r.ToolCalled = true, len(resp.ToolCalls) > 0
	}

	resp, err = c.Chat(ctx, Request{
		Messages: []Message{
			{Role: RoleSystem, Content: `Answer with one JSON object: {"ok": true}. No other text.`},
			{Role: RoleUser, Content: "Are you there?"},
		},
		ResponseFormat: &ResponseFormat{Name: "check", Schema: json.RawMessage(probeShape)},
		MaxTokens:      64,
		Think:          ThinkOff,
	})
	switch {
	case err != nil:
		r.JSONError, r.JSONFix = err.Error(), adviceOf(err)
	default:
		if jerr := jsonObject(resp.Content); jerr != nil {
			r.JSONError = jerr.Error()
			r.JSONFix = "choose a model that follows a JSON schema (qwen3:8b does), or a server with JSON-schema output (response_format)"
		} else {
			r.JSON = true
		}
	}
	return r
}

// jsonObject checks that an answer is one JSON object, maybe fenced.
func jsonObject(s string) error {
	s, _ = SplitThink(s)
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "```json")
	s = strings.TrimPrefix(s, "```")
	s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	var v map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &v); err != nil {
		if len(s) > 80 {
			s = s[:80] + "…"
		}
		return errors.New("the model did not answer the JSON step with a JSON object (it said " + strings.TrimSpace(oneLine(s, 100)) + "); cyan's steps (remember, speak, compress) need JSON output: choose a model that follows it, or a server with JSON-schema output")
	}
	return nil
}

// ListedAs reports whether a listed model id is the configured model: the
// same name, an Ollama ":latest" aside, or a dated id of an alias
// (claude-sonnet-4-5-20250929 for claude-sonnet-4-5).
func ListedAs(listed, model string) bool {
	if listed == model || strings.TrimSuffix(listed, ":latest") == strings.TrimSuffix(model, ":latest") {
		return true
	}
	rest, ok := strings.CutPrefix(listed, model+"-")
	if !ok || len(rest) != 8 {
		return false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// adviceOf is the advice of an *Error ("" for other errors).
func adviceOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Advice()
	}
	return ""
}
