package llm

import (
	"strings"
	"testing"
)

func TestRefineReadsTheServersWords(t *testing.T) {
	tests := []struct {
		status         int
		body           string
		kind           Kind
		feature        string
		prompt, window int
		advice         string
	}{
		{400, `{"error":{"code":400,"message":"request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9412,"n_ctx":8192}}`,
			ContextLength, "", 9412, 8192, "-c 16384"},
		{400, `{"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}}`,
			ContextLength, "", 5000, 4096, "--max-model-len"},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"}}`,
			ContextLength, "", 215000, 200000, "agent.context_budget"},
		{400, `{"error":{"message":"maximum context length exceeded","code":"context_length_exceeded"}}`, ContextLength, "", 0, 0, "agent.context_budget"},
		{400, `{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"invalid_request_error"}}`, Unsupported, "tools", 0, 0, "ollama show"},
		{400, `{"error":{"message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","code":400}}`, Unsupported, "tools", 0, 0, "--tool-call-parser hermes"},
		{400, `{"error":{"message":"Unrecognized request argument supplied: chat_template_kwargs","type":"invalid_request_error"}}`, Unsupported, "think_off", 0, 0, "llm.think_off"},
		{400, `{"error":{"message":"response_format is not supported"}}`, BadRequest, "", 0, 0, ""},
	}
	for _, tt := range tests {
		ae := parseErrorBody([]byte(tt.body))
		e := &Error{Kind: classify(tt.status, ae), Provider: "openai", URL: "http://127.0.0.1:8000/v1", Model: "m", Status: tt.status, Message: ae.Message}
		refine(e, ae)
		if e.Kind != tt.kind || e.Feature != tt.feature || e.PromptTokens != tt.prompt || e.Window != tt.window {
			t.Errorf("%s: %+v", tt.body, e)
		}
		if tt.advice != "" && !strings.Contains(e.Error(), tt.advice) {
			t.Errorf("%s: advice %q lacks %q", tt.body, e.Error(), tt.advice)
		}
	}
}

func FuzzRefine(f *testing.F) {
	f.Add(400, `{"error":{"message":"request (1 tokens) exceeds the available context size (2 tokens)","type":"exceed_context_size_error"}}`)
	f.Add(400, `{"error":"maximum context length is 99999999999999999999 tokens. However, you requested 1"}`)
	f.Add(0, `prompt is too long: 1 tokens > 2 maximum`)
	f.Fuzz(func(t *testing.T, status int, body string) {
		ae := parseErrorBody([]byte(body))
		e := &Error{Kind: classify(status, ae), Provider: "openai", URL: "http://127.0.0.1:11434/v1", Message: ae.Message}
		refine(e, ae)
		if e.PromptTokens < 0 || e.Window < 0 {
			t.Fatalf("negative counts: %+v", e)
		}
		_ = e.Error()
		_ = paramNumCtx(body)
	})
}
