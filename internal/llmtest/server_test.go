package llmtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// post sends body to path and returns the status and response body.
func post(t *testing.T, url string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

var anthropicHeader = map[string]string{"anthropic-version": "2023-06-01", "x-api-key": "k"}

// dataLines returns the data: payloads of an SSE body.
func dataLines(body string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestZeroValueServes(t *testing.T) {
	var s llmtest.Server
	ts := httptest.NewServer(&s)
	defer ts.Close()
	status, body := post(t, ts.URL+"/v1/chat/completions", nil, `{"model":"m","messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"}]}`)
	if status != 200 || !strings.Contains(body, `"content":"ok"`) {
		t.Fatalf("status %d body %s", status, body)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("recorded %d requests", len(reqs))
	}
	r := reqs[0]
	want := []llm.Message{{Role: llm.RoleSystem, Content: "sys"}, {Role: llm.RoleUser, Content: "hi"}}
	if r.Protocol != "openai" || r.Model != "m" || r.System != "sys" || !reflect.DeepEqual(r.Messages, want) {
		t.Errorf("recorded %+v", r)
	}
}

func TestOpenAIStreamShape(t *testing.T) {
	tests := []struct {
		name         string
		includeUsage bool
	}{{"with usage", true}, {"without usage", false}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s llmtest.Server
			ts := httptest.NewServer(&s)
			defer ts.Close()
			s.Enqueue(llmtest.Reply{Text: "hello", ToolCalls: []llm.ToolCall{{Name: "f", Arguments: `{"a":1}`}}, ChunkSize: 100})
			status, body := post(t, ts.URL+"/chat/completions", nil, fmt.Sprintf(
				`{"model":"m","stream":true,"stream_options":{"include_usage":%v},"messages":[{"role":"user","content":"hi"}]}`, tt.includeUsage))
			if status != 200 {
				t.Fatalf("status %d", status)
			}
			data := dataLines(body)
			if data[len(data)-1] != "[DONE]" {
				t.Errorf("last data = %q, want [DONE]", data[len(data)-1])
			}
			fragments, usage := 0, false
			for _, d := range data[:len(data)-1] {
				var ch struct {
					Choices []struct {
						Delta struct {
							ToolCalls []struct {
								Function struct {
									Arguments string `json:"arguments"`
								} `json:"function"`
							} `json:"tool_calls"`
						} `json:"delta"`
					} `json:"choices"`
					Usage *struct{} `json:"usage"`
				}
				if err := json.Unmarshal([]byte(d), &ch); err != nil {
					t.Fatalf("chunk %q: %v", d, err)
				}
				for _, c := range ch.Choices {
					for _, tc := range c.Delta.ToolCalls {
						if tc.Function.Arguments != "" {
							fragments++
						}
					}
				}
				usage = usage || ch.Usage != nil
			}
			if fragments < 2 {
				t.Errorf("arguments came in %d fragments, want several", fragments)
			}
			if usage != tt.includeUsage {
				t.Errorf("usage chunk sent = %v, want %v", usage, tt.includeUsage)
			}
		})
	}
}

func TestAnthropicStreamShape(t *testing.T) {
	var s llmtest.Server
	ts := httptest.NewServer(&s)
	defer ts.Close()
	s.Enqueue(llmtest.Reply{Reasoning: "hmm", Text: "hi", ToolCalls: []llm.ToolCall{{Name: "f", Arguments: `{"a":1}`}}})
	status, body := post(t, ts.URL+"/v1/messages", anthropicHeader, `{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var events []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok && e != "content_block_delta" {
			events = append(events, e)
		}
	}
	want := []string{"message_start", "ping",
		"content_block_start", "content_block_stop", // thinking
		"content_block_start", "content_block_stop", // text
		"content_block_start", "content_block_stop", // tool_use
		"message_delta", "message_stop"}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events = %v, want %v", events, want)
	}
	if n := strings.Count(body, "input_json_delta"); n < 2 {
		t.Errorf("%d input_json_delta events, want several", n)
	}
}

func TestRejectsWhatTheRealAPIsReject(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		header map[string]string
		body   string
	}{
		{"openai no model", "/v1/chat/completions", nil, `{"messages":[{"role":"user","content":"hi"}]}`},
		{"openai bad json", "/v1/chat/completions", nil, `{`},
		{"openai unknown tool_call_id", "/v1/chat/completions", nil,
			`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"nope","content":"x"}]}`},
		{"anthropic no version", "/v1/messages", map[string]string{"x-api-key": "k"}, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`},
		{"anthropic no max_tokens", "/v1/messages", anthropicHeader, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"anthropic same roles twice", "/v1/messages", anthropicHeader,
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`},
		{"anthropic system role", "/v1/messages", anthropicHeader,
			`{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"a"}]}`},
		{"anthropic tool_result after text", "/v1/messages", anthropicHeader,
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"t","content":"r"}]}]}`},
		{"anthropic budget over max", "/v1/messages", anthropicHeader,
			`{"model":"m","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":2000},"messages":[{"role":"user","content":"a"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s llmtest.Server
			ts := httptest.NewServer(&s)
			defer ts.Close()
			s.Enqueue(llmtest.Reply{Text: "queued"})
			status, body := post(t, ts.URL+tt.path, tt.header, tt.body)
			if status != 400 {
				t.Errorf("status %d, want 400: %s", status, body)
			}
			if len(s.Requests()) != 1 {
				t.Errorf("rejected request not recorded")
			}
			// The queued reply is still there for the next good request.
			_, body = post(t, ts.URL+"/v1/chat/completions", nil, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
			if !strings.Contains(body, "queued") {
				t.Errorf("queued reply was used up by the rejected request: %s", body)
			}
		})
	}
}

func TestErrorReplies(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		header map[string]string
		reply  llmtest.Reply
		want   string
	}{
		{"openai shape", "/v1/chat/completions", nil, llmtest.Reply{Status: 429, RetryAfter: "3"}, `"error":{"code":null,"message":"Too Many Requests","type":"invalid_request_error"}`},
		{"anthropic shape", "/v1/messages", anthropicHeader, llmtest.Reply{Status: 529}, `"type":"overloaded_error"`},
		{"verbatim body", "/v1/chat/completions", nil, llmtest.Reply{Status: 500, Body: "boom"}, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s llmtest.Server
			ts := httptest.NewServer(&s)
			defer ts.Close()
			s.Enqueue(tt.reply)
			body := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
			status, got := post(t, ts.URL+tt.path, tt.header, body)
			if status != tt.reply.Status || !strings.Contains(got, tt.want) {
				t.Errorf("status %d body %s, want %d with %s", status, got, tt.reply.Status, tt.want)
			}
		})
	}
}

func TestModelsAndRoutes(t *testing.T) {
	var s llmtest.Server
	ts := httptest.NewServer(&s)
	defer ts.Close()
	for _, path := range []string{"/models", "/v1/models"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if len(list.Data) != 1 || list.Data[0].ID != "fake-model" {
			t.Errorf("%s listed %+v", path, list.Data)
		}
	}
	resp, err := http.Get(ts.URL + "/v1/unknown")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown route: status %d", resp.StatusCode)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("recorded %d requests, want 3", n)
	}
	s.Reset()
	if n := len(s.Requests()); n != 0 {
		t.Errorf("after Reset: %d requests", n)
	}
}

func TestHangEndsWithTheClient(t *testing.T) {
	var s llmtest.Server
	ts := httptest.NewServer(&s)
	defer ts.Close()
	s.Enqueue(llmtest.Reply{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("a hanging reply answered")
	}
	// ts.Close (deferred) returns only once the handler has returned.
}

func TestConcurrentUse(t *testing.T) {
	var s llmtest.Server
	ts := httptest.NewServer(&s)
	defer ts.Close()
	c, err := llm.New(llm.Options{BaseURL: ts.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s.Enqueue(llmtest.Reply{Text: fmt.Sprint(i)})
			if _, err := c.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil); err != nil {
				t.Error(err)
			}
			s.Requests()
		})
	}
	wg.Wait()
	if n := len(s.Requests()); n != 8 {
		t.Errorf("recorded %d requests, want 8", n)
	}
}

// The Ollama replica cuts a prompt over its window from the oldest
// message, keeping the system prompt and the last message, and says
// nothing; the request records what it cut.
func TestOllamaReplicaCutsSilently(t *testing.T) {
	s := &llmtest.Server{Flavor: llmtest.Ollama, Window: 200}
	srv := httptest.NewServer(s)
	defer srv.Close()
	client, err := llm.New(llm.Options{BaseURL: srv.URL + "/v1", Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "be brief"}}
	for range 10 {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: strings.Repeat("x", 200)}, llm.Message{Role: llm.RoleAssistant, Content: "ok"})
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "last"})
	if _, err := client.Chat(context.Background(), llm.Request{Messages: msgs}); err != nil {
		t.Fatalf("Ollama does not refuse a long prompt: %v", err)
	}
	q := s.Requests()[0]
	if q.Truncated == 0 || q.PromptTokens > 200 || q.Messages[0].Role != llm.RoleSystem || q.Messages[len(q.Messages)-1].Content != "last" {
		t.Errorf("cut %d, prompt %d, messages %d", q.Truncated, q.PromptTokens, len(q.Messages))
	}
}
