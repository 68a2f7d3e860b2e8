package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestErrorMessages(t *testing.T) {
	const ollama = "http://127.0.0.1:11434/v1"
	tests := []struct {
		name string
		err  *Error
		want []string
	}{
		{"unreachable ollama", &Error{Kind: Unreachable, Provider: "openai", URL: ollama, Message: "connection refused"},
			[]string{"llm: no answer from openai at " + ollama + " (connection refused): start Ollama (ollama serve) or set CYAN_LLM_BASE_URL to a running OpenAI-compatible server"}},
		{"unreachable remote", &Error{Kind: Unreachable, Provider: "anthropic", URL: "https://api.anthropic.com", Message: "no such host"},
			[]string{"network", "CYAN_LLM_BASE_URL"}},
		{"model not found ollama", &Error{Kind: ModelNotFound, Provider: "openai", URL: ollama, Model: "qwen3:8b", Status: 404, Message: `model "qwen3:8b" not found, try pulling it first`},
			[]string{"model \"qwen3:8b\" not found at openai", "HTTP 404", "ollama pull qwen3:8b", "CYAN_LLM_MODEL"}},
		{"model not found elsewhere", &Error{Kind: ModelNotFound, Provider: "openai", URL: "https://api.example.com/v1", Model: "x", Status: 404},
			[]string{"CYAN_LLM_MODEL", "https://api.example.com/v1/models"}},
		{"auth", &Error{Kind: Auth, Provider: "anthropic", URL: "https://api.anthropic.com", Status: 401, Message: "invalid x-api-key"},
			[]string{"refused the API key", "invalid x-api-key", "CYAN_LLM_API_KEY"}},
		{"rate limited", &Error{Kind: RateLimited, Provider: "openai", URL: ollama, Status: 429, RetryAfter: 90 * time.Second},
			[]string{"rate limited", "retry in 1m30s"}},
		{"timeout", &Error{Kind: Timeout, Provider: "openai", URL: ollama, Message: "no response within 2m0s"},
			[]string{"did not answer in time (no response within 2m0s)", "CYAN_LLM_MODEL"}},
		{"bad response", &Error{Kind: BadResponse, Provider: "openai", URL: ollama, Err: errors.New("unexpected end of JSON input")},
			[]string{"unexpected end of JSON input", "CYAN_LLM_PROVIDER"}},
		{"config", &Error{Kind: Config, Message: "unknown provider \"x\": set CYAN_LLM_PROVIDER"},
			[]string{"llm: unknown provider \"x\": set CYAN_LLM_PROVIDER"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := tt.err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestKindOf(t *testing.T) {
	e := &Error{Kind: Quota}
	tests := []struct {
		name string
		err  error
		want Kind
	}{
		{"nil", nil, ""},
		{"plain", errors.New("x"), ""},
		{"direct", e, Quota},
		{"wrapped", fmt.Errorf("memory: summarize: %w", e), Quota},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KindOf(tt.err); got != tt.want {
				t.Errorf("KindOf = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseErrorBody(t *testing.T) {
	tests := []struct {
		name string
		body string
		want apiError
	}{
		{"openai", `{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`, apiError{"bad key", "invalid_request_error", "invalid_api_key"}},
		{"numeric code", `{"error":{"message":"m","type":"t","code":404}}`, apiError{"m", "t", "404"}},
		{"string error", `{"error":"model 'x' not found"}`, apiError{Message: "model 'x' not found"}},
		{"anthropic", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, apiError{"Overloaded", "overloaded_error", ""}},
		{"vllm", `{"object":"error","message":"The model x does not exist.","type":"NotFoundError","code":404}`, apiError{"The model x does not exist.", "NotFoundError", "404"}},
		{"fastapi", `{"detail":"Not Found"}`, apiError{Message: "Not Found"}},
		{"text", "upstream\n  connect error", apiError{Message: "upstream connect error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseErrorBody([]byte(tt.body)); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		status int
		ae     apiError
		want   Kind
	}{
		{"401", 401, apiError{}, Auth},
		{"403", 403, apiError{}, Auth},
		{"402", 402, apiError{}, Quota},
		{"429", 429, apiError{}, RateLimited},
		{"429 quota", 429, apiError{Code: "insufficient_quota"}, Quota},
		{"400 credit", 400, apiError{Message: "Your credit balance is too low to access the Anthropic API."}, Quota},
		{"404 ollama", 404, apiError{Message: `model "x" not found, try pulling it first`}, ModelNotFound},
		{"404 vllm", 404, apiError{Message: "The model `x` does not exist."}, ModelNotFound},
		{"400 lm studio", 400, apiError{Code: "model_not_found"}, ModelNotFound},
		{"404 anthropic", 404, apiError{Type: "not_found_error", Message: "model: claude-x"}, ModelNotFound},
		{"404 route", 404, apiError{Message: "404 page not found"}, BadRequest},
		{"422", 422, apiError{}, BadRequest},
		{"500", 500, apiError{}, Server},
		{"529", 529, apiError{Type: "overloaded_error"}, Server},
		{"500 mentioning a model", 500, apiError{Message: "model runner crashed: model not found in memory"}, Server},
		{"stream rate limit", 0, apiError{Type: "rate_limit_error"}, RateLimited},
		{"stream overloaded", 0, apiError{Type: "overloaded_error"}, Server},
		{"stream invalid", 0, apiError{Type: "invalid_request_error"}, BadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.status, tt.ae); got != tt.want {
				t.Errorf("classify = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"fraction", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"ms", map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, 250 * time.Millisecond},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"negative", map[string]string{"Retry-After": "-3"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := parseRetryAfter(h, now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	for n := range 20 {
		want := min(retry.Base<<min(n, 16), retry.Max)
		for range 50 {
			if d := retry.Delay(n); d < want/2 || d > want {
				t.Fatalf("retry.Delay(%d) = %v, want within [%v, %v]", n, d, want/2, want)
			}
		}
	}
}
