package llm_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

func TestChatPlain(t *testing.T) {
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			f := newFixture(t, p, nil)
			f.srv.Enqueue(llmtest.Reply{Text: "hello there", Usage: llm.Usage{InputTokens: 7, OutputTokens: 3}})
			resp, err := f.client.Chat(context.Background(), llm.Request{Messages: []llm.Message{userMsg("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			want := &llm.Response{Content: "hello there", FinishReason: "stop", Usage: llm.Usage{InputTokens: 7, OutputTokens: 3}, Model: "fake-model"}
			if !reflect.DeepEqual(resp, want) {
				t.Errorf("response = %+v, want %+v", resp, want)
			}
			r := f.only(t)
			if r.Protocol != p || r.Model != "fake-model" || r.Stream {
				t.Errorf("recorded protocol %q model %q stream %v", r.Protocol, r.Model, r.Stream)
			}
			if !reflect.DeepEqual(r.Messages, []llm.Message{userMsg("hi")}) {
				t.Errorf("recorded messages = %+v", r.Messages)
			}
			switch p {
			case "openai":
				if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
					t.Errorf("Authorization = %q", got)
				}
			case "anthropic":
				if r.Header.Get("x-api-key") != "test-key" || r.Header.Get("anthropic-version") != "2023-06-01" {
					t.Errorf("headers = %v", r.Header)
				}
				if r.MaxTokens != 4096 {
					t.Errorf("max_tokens = %d, want the 4096 default", r.MaxTokens)
				}
			}
		})
	}
}

func TestRequestModelOverridesDefault(t *testing.T) {
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			f := newFixture(t, p, nil)
			resp, err := f.client.Chat(context.Background(), llm.Request{Model: "other", Messages: []llm.Message{userMsg("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			if f.only(t).Model != "other" || resp.Model != "other" || resp.Content != "ok" {
				t.Errorf("model %q, response %+v", f.only(t).Model, resp)
			}
		})
	}
}

func TestStream(t *testing.T) {
	const text = "Hello, streaming wörld!"
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			f := newFixture(t, p, nil)
			f.srv.Enqueue(llmtest.Reply{Text: text, ChunkSize: 3, Usage: llm.Usage{InputTokens: 11, OutputTokens: 6}})
			var c collect
			resp, err := f.client.Stream(context.Background(), llm.Request{Messages: []llm.Message{userMsg("hi")}}, c.on)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.deltas) < 5 {
				t.Errorf("got %d deltas, want one per 3-rune chunk", len(c.deltas))
			}
			for i, d := range c.deltas {
				if d.Content == "" && d.Reasoning == "" {
					t.Errorf("delta %d is empty", i)
				}
			}
			if c.content() != text || resp.Content != text {
				t.Errorf("deltas %q, response %q, want %q", c.content(), resp.Content, text)
			}
			if resp.Usage != (llm.Usage{InputTokens: 11, OutputTokens: 6}) || resp.FinishReason != "stop" {
				t.Errorf("usage %+v finish %q", resp.Usage, resp.FinishReason)
			}
			r := f.only(t)
			if !r.Stream {
				t.Error("request was not a stream")
			}
			if p == "openai" && !strings.Contains(string(r.Body), `"stream_options":{"include_usage":true}`) {
				t.Errorf("body lacks stream_options: %s", r.Body)
			}
		})
	}
}

func TestToolCalls(t *testing.T) {
	calls := []llm.ToolCall{
		{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`},
		{ID: "call_2", Name: "now", Arguments: `{}`},
	}
	tools := []llm.Tool{
		{Name: "get_weather", Description: "Weather for a city.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
		{Name: "now", Description: "The time."},
	}
	for _, p := range providers {
		for _, stream := range []bool{false, true} {
			name := p + "/plain"
			if stream {
				name = p + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				f := newFixture(t, p, nil)
				f.srv.Enqueue(llmtest.Reply{Text: "Let me look.", ToolCalls: calls, ChunkSize: 3})
				req := llm.Request{Messages: []llm.Message{userMsg("weather?")}, Tools: tools}
				var resp *llm.Response
				var err error
				if stream {
					resp, err = f.client.Stream(context.Background(), req, nil)
				} else {
					resp, err = f.client.Chat(context.Background(), req)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(resp.ToolCalls, calls) {
					t.Errorf("tool calls = %+v, want %+v", resp.ToolCalls, calls)
				}
				if resp.Content != "Let me look." || resp.FinishReason != "tool_calls" {
					t.Errorf("content %q finish %q", resp.Content, resp.FinishReason)
				}
				got := f.only(t).Tools
				if len(got) != 2 || got[0].Name != "get_weather" || got[0].Description != "Weather for a city." ||
					!jsonEqual(got[0].Parameters, tools[0].Parameters) ||
					!jsonEqual(got[1].Parameters, json.RawMessage(`{"type":"object","properties":{}}`)) {
					t.Errorf("recorded tools = %+v", got)
				}
			})
		}
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// toolConversation is a finished tool round: the model called a tool and
// the tool answered.
func toolConversation() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleSystem, Content: "You are terse."},
		userMsg("weather in Paris?"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_9", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{Role: llm.RoleTool, ToolCallID: "call_9", ToolName: "get_weather", Content: "18°C, clear"},
	}
}

func TestToolResultEncoding(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		// wantBody are JSON values the raw body must contain at these paths.
		check func(t *testing.T, body map[string]any)
		want  []llm.Message
	}{
		{
			name:     "openai",
			provider: "openai",
			check: func(t *testing.T, body map[string]any) {
				msgs := body["messages"].([]any)
				asst := msgs[2].(map[string]any)
				if asst["content"] != nil {
					t.Errorf("assistant content = %#v, want null", asst["content"])
				}
				tc := asst["tool_calls"].([]any)[0].(map[string]any)
				fn := tc["function"].(map[string]any)
				if tc["id"] != "call_9" || tc["type"] != "function" || fn["name"] != "get_weather" || fn["arguments"] != `{"city":"Paris"}` {
					t.Errorf("tool call = %#v", tc)
				}
				tool := msgs[3].(map[string]any)
				if tool["role"] != "tool" || tool["tool_call_id"] != "call_9" || tool["content"] != "18°C, clear" {
					t.Errorf("tool message = %#v", tool)
				}
			},
			want: []llm.Message{
				{Role: llm.RoleSystem, Content: "You are terse."},
				userMsg("weather in Paris?"),
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_9", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
				{Role: llm.RoleTool, ToolCallID: "call_9", Content: "18°C, clear"},
			},
		},
		{
			name:     "anthropic",
			provider: "anthropic",
			check: func(t *testing.T, body map[string]any) {
				if body["system"] != "You are terse." {
					t.Errorf("system = %#v", body["system"])
				}
				msgs := body["messages"].([]any)
				if len(msgs) != 3 {
					t.Fatalf("got %d messages, want 3", len(msgs))
				}
				use := msgs[1].(map[string]any)["content"].([]any)[0].(map[string]any)
				input, _ := json.Marshal(use["input"])
				if use["type"] != "tool_use" || use["id"] != "call_9" || use["name"] != "get_weather" || string(input) != `{"city":"Paris"}` {
					t.Errorf("tool_use = %#v", use)
				}
				res := msgs[2].(map[string]any)
				block := res["content"].([]any)[0].(map[string]any)
				if res["role"] != "user" || block["type"] != "tool_result" || block["tool_use_id"] != "call_9" || block["content"] != "18°C, clear" {
					t.Errorf("tool_result message = %#v", res)
				}
			},
			want: []llm.Message{
				userMsg("weather in Paris?"),
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_9", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
				{Role: llm.RoleTool, ToolCallID: "call_9", Content: "18°C, clear"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.provider, nil)
			if _, err := f.client.Chat(context.Background(), llm.Request{Messages: toolConversation()}); err != nil {
				t.Fatal(err)
			}
			r := f.only(t)
			var body map[string]any
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			tt.check(t, body)
			if !reflect.DeepEqual(r.Messages, tt.want) {
				t.Errorf("recorded messages =\n%+v\nwant\n%+v", r.Messages, tt.want)
			}
		})
	}
}

func TestResponseFormat(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"mood":{"type":"string"}},"required":["mood"]}`)
	req := llm.Request{
		Messages:       []llm.Message{userMsg("how are you?")},
		ResponseFormat: &llm.ResponseFormat{Name: "mood", Schema: schema, Strict: true},
	}
	t.Run("openai", func(t *testing.T) {
		f := newFixture(t, "openai", nil)
		if _, err := f.client.Chat(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		want := `{"type":"json_schema","json_schema":{"name":"mood","schema":` + string(schema) + `,"strict":true}}`
		if got := f.only(t).ResponseFormat; !jsonEqual(got, json.RawMessage(want)) {
			t.Errorf("response_format = %s, want %s", got, want)
		}
	})
	t.Run("anthropic asks in the system prompt", func(t *testing.T) {
		f := newFixture(t, "anthropic", nil)
		if _, err := f.client.Chat(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if sys := f.only(t).System; !strings.Contains(sys, string(schema)) {
			t.Errorf("system = %q, want the schema in it", sys)
		}
	})
}

func TestReasoning(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		reply    llmtest.Reply
	}{
		{"openai reasoning_content", "openai", llmtest.Reply{Reasoning: "pondering deeply", Text: "The answer."}},
		{"openai inline think", "openai", llmtest.Reply{Text: "<think>\npondering deeply\n</think>\n\nThe answer."}},
		{"openai inline think in tiny chunks", "openai", llmtest.Reply{Text: "  <think>pondering deeply</think>The answer.", ChunkSize: 1}},
		{"anthropic thinking block", "anthropic", llmtest.Reply{Reasoning: "pondering deeply", Text: "The answer."}},
		{"anthropic inline think", "anthropic", llmtest.Reply{Text: "<think>pondering deeply</think>The answer.", ChunkSize: 2}},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name + "/plain"
			if stream {
				name = tt.name + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				f := newFixture(t, tt.provider, nil)
				f.srv.Enqueue(tt.reply)
				req := llm.Request{Messages: []llm.Message{userMsg("why?")}}
				var c collect
				var resp *llm.Response
				var err error
				if stream {
					resp, err = f.client.Stream(context.Background(), req, c.on)
				} else {
					resp, err = f.client.Chat(context.Background(), req)
				}
				if err != nil {
					t.Fatal(err)
				}
				if resp.Content != "The answer." || resp.Reasoning != "pondering deeply" {
					t.Errorf("content %q reasoning %q", resp.Content, resp.Reasoning)
				}
				if !stream {
					return
				}
				for i, d := range c.deltas {
					if strings.Contains(d.Content, "think") || strings.Contains(d.Content, "ponder") || strings.Contains(d.Content, "<") {
						t.Errorf("delta %d leaks reasoning into content: %q", i, d.Content)
					}
				}
				if c.content() != "The answer." || strings.TrimSpace(c.reasoning()) != "pondering deeply" {
					t.Errorf("streamed content %q reasoning %q", c.content(), c.reasoning())
				}
			})
		}
	}
}

func TestReasoningField(t *testing.T) {
	// Ollama and OpenRouter name the field "reasoning".
	f := newFixture(t, "openai", nil)
	f.srv.Enqueue(llmtest.Reply{Body: `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","reasoning":"hmm"},"finish_reason":"stop"}]}`})
	f.srv.Enqueue(llmtest.Reply{Body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"hm\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"m\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"})
	req := llm.Request{Messages: []llm.Message{userMsg("x")}}
	resp, err := f.client.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "hi" || resp.Reasoning != "hmm" {
		t.Errorf("plain: content %q reasoning %q", resp.Content, resp.Reasoning)
	}
	var c collect
	resp, err = f.client.Stream(context.Background(), req, c.on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "hi" || resp.Reasoning != "hmm" || c.reasoning() != "hmm" {
		t.Errorf("stream: content %q reasoning %q deltas %q", resp.Content, resp.Reasoning, c.reasoning())
	}
}

func TestThinkHints(t *testing.T) {
	temp := 0.3
	tests := []struct {
		name     string
		provider string
		req      llm.Request
		check    func(t *testing.T, body map[string]any)
	}{
		{"openai high", "openai", llm.Request{Think: llm.ThinkHigh}, func(t *testing.T, b map[string]any) {
			if b["reasoning_effort"] != "high" {
				t.Errorf("reasoning_effort = %v", b["reasoning_effort"])
			}
		}},
		{"openai on", "openai", llm.Request{Think: llm.ThinkOn}, func(t *testing.T, b map[string]any) {
			if b["reasoning_effort"] != "medium" {
				t.Errorf("reasoning_effort = %v", b["reasoning_effort"])
			}
		}},
		{"openai off", "openai", llm.Request{Think: llm.ThinkOff, Temperature: &temp, MaxTokens: 99}, func(t *testing.T, b map[string]any) {
			if _, ok := b["reasoning_effort"]; ok {
				t.Errorf("reasoning_effort sent: %v", b["reasoning_effort"])
			}
			if b["temperature"] != 0.3 || b["max_tokens"] != 99.0 {
				t.Errorf("temperature %v max_tokens %v", b["temperature"], b["max_tokens"])
			}
		}},
		{"anthropic on", "anthropic", llm.Request{Think: llm.ThinkOn, Temperature: &temp}, func(t *testing.T, b map[string]any) {
			th, _ := b["thinking"].(map[string]any)
			if th["type"] != "enabled" || th["budget_tokens"] != 4096.0 || b["max_tokens"] != 8192.0 {
				t.Errorf("thinking %v max_tokens %v", th, b["max_tokens"])
			}
			if _, ok := b["temperature"]; ok {
				t.Error("temperature sent with thinking on")
			}
		}},
		{"anthropic low with max tokens", "anthropic", llm.Request{Think: llm.ThinkLow, MaxTokens: 500}, func(t *testing.T, b map[string]any) {
			th, _ := b["thinking"].(map[string]any)
			if th["budget_tokens"] != 1024.0 || b["max_tokens"] != 1524.0 {
				t.Errorf("thinking %v max_tokens %v", th, b["max_tokens"])
			}
		}},
		{"anthropic off", "anthropic", llm.Request{Think: llm.ThinkOff, Temperature: &temp}, func(t *testing.T, b map[string]any) {
			if _, ok := b["thinking"]; ok || b["temperature"] != 0.3 {
				t.Errorf("thinking %v temperature %v", b["thinking"], b["temperature"])
			}
		}},
		{"anthropic mid tool loop", "anthropic", llm.Request{Think: llm.ThinkHigh, Messages: toolConversation()}, func(t *testing.T, b map[string]any) {
			if _, ok := b["thinking"]; ok {
				t.Error("thinking sent while continuing a tool call without its signed thinking block")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.provider, nil)
			if tt.req.Messages == nil {
				tt.req.Messages = []llm.Message{userMsg("think")}
			}
			if _, err := f.client.Chat(context.Background(), tt.req); err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			if err := json.Unmarshal(f.only(t).Body, &body); err != nil {
				t.Fatal(err)
			}
			tt.check(t, body)
		})
	}
}

func TestAnthropicSystemAndMerge(t *testing.T) {
	f := newFixture(t, "anthropic", nil)
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "Be kind."},
		{Role: llm.RoleSystem, Content: "Be brief."},
		userMsg("hi"),
		userMsg("are you there?"),
		{Role: llm.RoleAssistant, Content: "Yes."},
		{Role: llm.RoleAssistant, Content: "Checking.", ToolCalls: []llm.ToolCall{
			{ID: "t1", Name: "a", Arguments: `{"x":1}`},
			{ID: "t2", Name: "b", Arguments: `not json`},
		}},
		{Role: llm.RoleTool, ToolCallID: "t1", Content: "one"},
		{Role: llm.RoleTool, ToolCallID: "t2", Content: "two"},
		userMsg("thanks"),
	}
	if _, err := f.client.Chat(context.Background(), llm.Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	r := f.only(t)
	if r.System != "Be kind.\n\nBe brief." {
		t.Errorf("system = %q", r.System)
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type  string          `json:"type"`
				Text  string          `json:"text"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range body.Messages {
		var types []string
		for _, b := range m.Content {
			types = append(types, b.Type)
		}
		got = append(got, m.Role+":"+strings.Join(types, ","))
	}
	want := []string{"user:text,text", "assistant:text,text,tool_use,tool_use", "user:tool_result,tool_result,text"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages = %v, want %v", got, want)
	}
	if in := body.Messages[1].Content[3].Input; string(in) != "{}" {
		t.Errorf("invalid arguments sent as %s, want {}", in)
	}
}

func TestAnthropicBaseURLWithV1(t *testing.T) {
	f := newFixture(t, "anthropic", func(o *llm.Options) { o.BaseURL += "/v1/" })
	if _, err := f.client.Chat(context.Background(), llm.Request{Messages: []llm.Message{userMsg("hi")}}); err != nil {
		t.Fatal(err)
	}
	if p := f.only(t).Path; p != "/v1/messages" {
		t.Errorf("path = %q, want /v1/messages", p)
	}
}

func TestModels(t *testing.T) {
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			f := newFixture(t, p, nil)
			f.srv.Models = []string{"qwen3:8b", "llama3.2"}
			got, err := f.client.Models(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, f.srv.Models) {
				t.Errorf("models = %v", got)
			}
			if path := f.only(t).Path; !strings.HasSuffix(path, "/v1/models") {
				t.Errorf("path = %q", path)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	f := newFixture(t, "openai", nil)
	if d := f.client.Describe(); d != "openai at "+f.ts.URL+"/v1, model fake-model" {
		t.Errorf("Describe() = %q", d)
	}
}

func TestStreamedToolCallsWithoutIndex(t *testing.T) {
	// Some OpenAI-compatible servers leave out "index"; a new id starts a
	// new call.
	f := newFixture(t, "openai", nil)
	chunk := func(delta string) string {
		return `data: {"choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n"
	}
	f.srv.Enqueue(llmtest.Reply{Body: chunk(`{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":"}}]}`) +
		chunk(`{"tool_calls":[{"function":{"arguments":"1}"}}]}`) +
		chunk(`{"tool_calls":[{"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}`) +
		"data: [DONE]\n\n"})
	resp, err := f.client.Stream(context.Background(), llm.Request{Messages: []llm.Message{userMsg("x")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "a", Name: "f", Arguments: `{"x":1}`}, {ID: "b", Name: "g", Arguments: `{}`}}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls = %+v, want %+v", resp.ToolCalls, want)
	}
}
