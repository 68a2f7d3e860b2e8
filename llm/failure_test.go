package llm_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// call runs a plain or streamed chat of one user message.
func call(ctx context.Context, c llm.Client, stream bool) (*llm.Response, error) {
	req := llm.Request{Messages: []llm.Message{userMsg("hi")}}
	if stream {
		return c.Stream(ctx, req, nil)
	}
	return c.Chat(ctx, req)
}

// modes names the plain and streamed variants of a test.
var modes = []struct {
	name   string
	stream bool
}{{"plain", false}, {"stream", true}}

func TestRetryHonoursRetryAfter(t *testing.T) {
	for _, p := range providers {
		for _, m := range modes {
			t.Run(p+"/"+m.name, func(t *testing.T) {
				f := newFixture(t, p, nil)
				f.srv.Enqueue(llmtest.Reply{Status: 503, RetryAfter: "2"}, llmtest.Reply{Text: "recovered"})
				resp, err := call(context.Background(), f.client, m.stream)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Content != "recovered" {
					t.Errorf("content = %q", resp.Content)
				}
				if n := len(f.srv.Requests()); n != 2 {
					t.Errorf("server saw %d requests, want 2", n)
				}
				if got := f.sleeps.got(); !reflect.DeepEqual(got, []time.Duration{2 * time.Second}) {
					t.Errorf("slept %v, want [2s]", got)
				}
			})
		}
	}
}

func TestRetryBackoff(t *testing.T) {
	f := newFixture(t, "openai", nil)
	f.srv.Enqueue(llmtest.Reply{Status: 500}, llmtest.Reply{Status: 429}, llmtest.Reply{Text: "ok"})
	if _, err := call(context.Background(), f.client, false); err != nil {
		t.Fatal(err)
	}
	got := f.sleeps.got()
	if len(got) != 2 {
		t.Fatalf("slept %v, want two waits", got)
	}
	for i, bounds := range [][2]time.Duration{{250 * time.Millisecond, 500 * time.Millisecond}, {500 * time.Millisecond, time.Second}} {
		if got[i] < bounds[0] || got[i] > bounds[1] {
			t.Errorf("wait %d = %v, want within %v", i, got[i], bounds)
		}
	}
}

func TestRetriesRunOut(t *testing.T) {
	f := newFixture(t, "openai", func(o *llm.Options) { o.MaxRetries = 1 })
	f.srv.Enqueue(llmtest.Reply{Status: 502}, llmtest.Reply{Status: 502}, llmtest.Reply{Status: 502})
	_, err := call(context.Background(), f.client, false)
	if llm.KindOf(err) != llm.Server {
		t.Fatalf("err = %v, want a Server error", err)
	}
	if n := len(f.srv.Requests()); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
}

func TestNoRetry(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		reply    llmtest.Reply
		kind     llm.Kind
		mention  []string
	}{
		{"400", "openai", llmtest.Reply{Status: 400}, llm.BadRequest, nil},
		{"401", "openai", llmtest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`},
			llm.Auth, []string{"Incorrect API key provided", "CYAN_LLM_API_KEY"}},
		{"401 anthropic", "anthropic", llmtest.Reply{Status: 401}, llm.Auth, []string{"CYAN_LLM_API_KEY", "Unauthorized"}},
		{"403", "anthropic", llmtest.Reply{Status: 403}, llm.Auth, nil},
		{"404 route", "openai", llmtest.Reply{Status: 404, Body: `404 page not found`}, llm.BadRequest, []string{"CYAN_LLM_BASE_URL", "/v1"}},
		{"404 ollama model", "openai", llmtest.Reply{Status: 404, Body: `{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`},
			llm.ModelNotFound, []string{"CYAN_LLM_MODEL", "not found"}},
		{"404 openai model", "openai", llmtest.Reply{Status: 404, Body: `{"error":{"message":"The model 'gpt-9' does not exist","type":"invalid_request_error","code":"model_not_found"}}`},
			llm.ModelNotFound, []string{"CYAN_LLM_MODEL", "/models"}},
		{"404 anthropic model", "anthropic", llmtest.Reply{Status: 404, Body: `{"type":"error","error":{"type":"not_found_error","message":"model: claude-9"}}`},
			llm.ModelNotFound, []string{"CYAN_LLM_MODEL", "/v1/models"}},
		{"404 plain-text error", "openai", llmtest.Reply{Status: 404, Body: `{"error":"model 'x' not found"}`}, llm.ModelNotFound, nil},
		{"422", "openai", llmtest.Reply{Status: 422, Body: `{"detail":"field required"}`}, llm.BadRequest, []string{"field required"}},
		{"402", "openai", llmtest.Reply{Status: 402}, llm.Quota, []string{"billing"}},
		{"429 quota", "openai", llmtest.Reply{Status: 429, Body: `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`},
			llm.Quota, []string{"exceeded your current quota"}},
		{"429 long retry-after", "openai", llmtest.Reply{Status: 429, RetryAfter: "120"}, llm.RateLimited, []string{"retry in 2m0s"}},
	}
	for _, tt := range tests {
		for _, m := range modes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				f := newFixture(t, tt.provider, nil)
				f.srv.Enqueue(tt.reply, llmtest.Reply{Text: "should not be reached"})
				var c collect
				var err error
				if m.stream {
					_, err = f.client.Stream(context.Background(), llm.Request{Messages: []llm.Message{userMsg("hi")}}, c.on)
				} else {
					_, err = call(context.Background(), f.client, false)
				}
				var e *llm.Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v, want an *llm.Error", err)
				}
				if e.Kind != tt.kind || e.Status != tt.reply.Status || e.Provider != tt.provider || e.Model != "fake-model" {
					t.Errorf("error = %+v, want kind %s", e, tt.kind)
				}
				for _, s := range tt.mention {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("message %q does not mention %q", err, s)
					}
				}
				f.only(t)
				if len(c.deltas) != 0 || len(f.sleeps.got()) != 0 {
					t.Errorf("deltas %v sleeps %v", c.deltas, f.sleeps.got())
				}
			})
		}
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			var s sleeps
			c, err := llm.New(llm.Options{Provider: p, BaseURL: "http://" + addr + "/v1", Model: "m", Sleep: s.sleep})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Chat(context.Background(), llm.Request{Messages: []llm.Message{userMsg("hi")}})
			if llm.KindOf(err) != llm.Unreachable {
				t.Fatalf("err = %v, want Unreachable", err)
			}
			for _, want := range []string{"connection refused", "CYAN_LLM_BASE_URL", addr} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not mention %q", err, want)
				}
			}
			if n := len(s.got()); n != 2 {
				t.Errorf("slept %d times, want 2 (two retries)", n)
			}
		})
	}
}

func TestContextCancel(t *testing.T) {
	for _, p := range providers {
		for _, m := range modes {
			for _, hang := range []bool{false, true} {
				name := p + "/" + m.name + "/delay"
				if hang {
					name = p + "/" + m.name + "/hang"
				}
				t.Run(name, func(t *testing.T) {
					f := newFixture(t, p, nil)
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					// The fake answers after an hour at the earliest (or
					// never): a call that returns at all noticed the
					// cancel. The minute below only stops a hung test.
					f.srv.SetDefault(func(llmtest.Request) llmtest.Reply {
						cancel() // the call is in flight now
						return llmtest.Reply{Hang: hang, Delay: time.Hour}
					})
					done := make(chan error, 1)
					go func() {
						_, err := call(ctx, f.client, m.stream)
						done <- err
					}()
					var err error
					select {
					case err = <-done:
					case <-time.After(time.Minute):
						t.Fatal("the call did not notice the cancel: still waiting for the answer after a minute")
					}
					if !errors.Is(err, context.Canceled) || llm.KindOf(err) != "" {
						t.Fatalf("err = %v, want the context's error", err)
					}
					if len(f.srv.Requests()) != 1 || len(f.sleeps.got()) != 0 {
						t.Errorf("retried after cancel: %d requests, sleeps %v", len(f.srv.Requests()), f.sleeps.got())
					}
				})
			}
		}
	}
}

func TestTimeout(t *testing.T) {
	tests := []struct {
		name    string
		stream  bool
		reply   llmtest.Reply
		mention string
	}{
		{"no headers", false, llmtest.Reply{Delay: time.Minute}, "no complete answer within"},
		{"stream no headers", true, llmtest.Reply{Hang: true}, "no complete answer within"},
		{"stream stalls", true, llmtest.Reply{Text: "abcdefgh", ChunkDelay: time.Minute}, "bounds the whole call"},
		// DeepSeek holds a waiting request open with ": keep-alive"
		// comments; they must not stretch the call past its timeout.
		{"keep-alive comments", true, llmtest.Reply{KeepAlive: 5 * time.Millisecond}, "bounds the whole call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "openai", func(o *llm.Options) {
				o.Timeout = 50 * time.Millisecond
				o.MaxRetries = -1
			})
			f.srv.Enqueue(tt.reply)
			_, err := call(context.Background(), f.client, tt.stream)
			if llm.KindOf(err) != llm.Timeout || !strings.Contains(err.Error(), tt.mention) {
				t.Fatalf("err = %v, want a Timeout mentioning %q", err, tt.mention)
			}
		})
	}
}

func TestStreamRetriesOnlyBeforeFirstDelta(t *testing.T) {
	const midError = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial\"}}]}\n\n" +
		"data: {\"error\":{\"message\":\"upstream overloaded\",\"type\":\"server_error\"}}\n\n"
	const earlyError = "data: {\"error\":{\"message\":\"upstream overloaded\",\"type\":\"server_error\"}}\n\n"
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		requests int
		content  string
		kind     llm.Kind
	}{
		{"error before output is retried", []llmtest.Reply{{Body: earlyError}, {Text: "fine"}}, 2, "fine", ""},
		{"error after output is not", []llmtest.Reply{{Body: midError}, {Text: "fine"}}, 1, "partial", llm.Server},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "openai", nil)
			f.srv.Enqueue(tt.replies...)
			var c collect
			_, err := f.client.Stream(context.Background(), llm.Request{Messages: []llm.Message{userMsg("hi")}}, c.on)
			if llm.KindOf(err) != tt.kind {
				t.Errorf("err = %v, want kind %q", err, tt.kind)
			}
			if err != nil && !strings.Contains(err.Error(), "upstream overloaded") {
				t.Errorf("message %q lacks the provider's words", err)
			}
			if n := len(f.srv.Requests()); n != tt.requests || c.content() != tt.content {
				t.Errorf("%d requests, content %q", n, c.content())
			}
		})
	}
}

func TestAnthropicStreamErrorEvent(t *testing.T) {
	f := newFixture(t, "anthropic", func(o *llm.Options) { o.MaxRetries = -1 })
	f.srv.Enqueue(llmtest.Reply{Body: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"})
	_, err := f.client.Stream(context.Background(), llm.Request{Messages: []llm.Message{userMsg("hi")}}, nil)
	if llm.KindOf(err) != llm.Server || !strings.Contains(err.Error(), "Overloaded") {
		t.Errorf("err = %v, want a Server error with the provider's message", err)
	}
}

func TestOnDeltaErrorAborts(t *testing.T) {
	errStop := errors.New("stop here")
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			f := newFixture(t, p, nil)
			f.srv.Enqueue(llmtest.Reply{Text: "a long answer in many chunks"})
			n := 0
			_, err := f.client.Stream(context.Background(), llm.Request{Messages: []llm.Message{userMsg("hi")}}, func(llm.Delta) error {
				n++
				return errStop
			})
			if err != errStop || n != 1 {
				t.Errorf("err = %v after %d deltas, want errStop after 1", err, n)
			}
			f.only(t)
		})
	}
}

func TestBadResponse(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		body   string
	}{
		{"not json", false, "<html>hello</html>"},
		{"no choices", false, `{"choices":[]}`},
		{"broken chunk", true, "data: {nope\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "openai", nil)
			f.srv.Enqueue(llmtest.Reply{Body: tt.body})
			_, err := call(context.Background(), f.client, tt.stream)
			if llm.KindOf(err) != llm.BadResponse || !strings.Contains(err.Error(), "CYAN_LLM_BASE_URL") {
				t.Errorf("err = %v, want BadResponse", err)
			}
			f.only(t)
		})
	}
}

func TestStreamAnsweredWithJSON(t *testing.T) {
	// Some servers and proxies ignore "stream": true.
	bodies := map[string]string{
		"openai":    `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"<think>hm</think>whole"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
		"anthropic": `{"type":"message","model":"m","content":[{"type":"text","text":"whole"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":2}}`,
	}
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				io.WriteString(w, bodies[p])
			}))
			defer ts.Close()
			c, err := llm.New(llm.Options{Provider: p, BaseURL: ts.URL, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			var col collect
			resp, err := c.Stream(context.Background(), llm.Request{Messages: []llm.Message{userMsg("hi")}}, col.on)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != "whole" || col.content() != "whole" || resp.Usage.OutputTokens != 2 {
				t.Errorf("response %+v, deltas %+v", resp, col.deltas)
			}
		})
	}
}

func TestEmptyStream(t *testing.T) {
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			f := newFixture(t, p, func(o *llm.Options) { o.MaxRetries = -1 })
			f.srv.Enqueue(llmtest.Reply{Body: ": nothing but a comment\n\n"})
			_, err := f.client.Stream(context.Background(), llm.Request{Messages: []llm.Message{userMsg("hi")}}, nil)
			if llm.KindOf(err) != llm.BadResponse {
				t.Errorf("err = %v, want BadResponse", err)
			}
		})
	}
}
