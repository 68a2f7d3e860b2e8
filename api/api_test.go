package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/store"
)

type rig struct {
	srv     *httptest.Server
	server  *Server
	fake    *llmtest.Server
	fakeURL string
	st      *store.Store
}

func newRig(t testing.TB, mutate func(*Options)) *rig {
	t.Helper()
	fake := new(llmtest.Server)
	llmSrv := httptest.NewServer(fake)
	t.Cleanup(llmSrv.Close)
	client, err := llm.New(llm.Options{BaseURL: llmSrv.URL + "/v1", Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, _ := persona.Default()
	o := Options{Store: st, CheckHost: true, MaxBodyBytes: 64 << 10}
	if mutate != nil {
		mutate(&o)
	}
	// With a voice, every turn posts its live text, as in the daemon.
	// The fake model writes no reasoning: the rig knows it (opens_think
	// no), as after the model's first answer, so that the first reply
	// streams too.
	mv, err := mainvirtual.New(mainvirtual.Options{Store: st, LLM: client, Persona: func() *persona.Persona { return p }, Agent: config.Defaults().Agent,
		LiveText: o.Voice != nil, OpensThink: "no"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Agent == nil {
		o.Agent = mv
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &rig{srv: srv, server: s, fake: fake, fakeURL: llmSrv.URL, st: st}
}

func (r *rig) do(t *testing.T, method, path, body string, hdr ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, r.srv.URL+path, strings.NewReader(body))
	if method != "GET" && method != "HEAD" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: body is not JSON: %q", method, path, raw)
	}
	return resp.StatusCode, out
}

func errType(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

func TestMessagesRoundTrip(t *testing.T) {
	r := newRig(t, nil)
	if code, out := r.do(t, "GET", "/healthz", ""); code != 200 || out["ok"] != true {
		t.Fatalf("healthz: %d %v", code, out)
	}
	r.fake.Enqueue(llmtest.Reply{Text: "hi\n@br\nthere"})
	code, out := r.do(t, "POST", "/api/v1/messages", `{"channel":"home","user":"alice","text":"hello"}`)
	if code != 200 || out["message_id"] == "" {
		t.Fatalf("post: %d %v", code, out)
	}
	if rs := out["replies"].([]any); len(rs) != 2 || rs[0] != "hi" || rs[1] != "there" {
		t.Fatalf("replies = %v", out["replies"])
	}
	r.fake.Enqueue(llmtest.Reply{Text: "<empty_reply>"})
	_, out = r.do(t, "POST", "/api/v1/messages", `{"channel":"home","user":"alice","text":"shh"}`)
	if rs, ok := out["replies"].([]any); !ok || len(rs) != 0 {
		t.Fatalf("empty reply must be [], got %v", out["replies"])
	}
	code, out = r.do(t, "GET", "/api/v1/messages?channel=home", "")
	msgs := out["messages"].([]any)
	if code != 200 || len(msgs) != 4 {
		t.Fatalf("list: %d %v", code, out)
	}
	first := msgs[0].(map[string]any)
	for _, k := range []string{"id", "role", "user", "text", "time"} {
		if _, ok := first[k]; !ok {
			t.Errorf("message lacks %q: %v", k, first)
		}
	}
	if first["role"] != "user" || msgs[1].(map[string]any)["role"] != "assistant" {
		t.Errorf("order/roles: %v", msgs)
	}
	_, out = r.do(t, "GET", "/api/v1/messages?channel=home&all=1", "")
	if n := len(out["messages"].([]any)); n != 5 {
		t.Errorf("all=1 lists %d, want 5 (with the silent turn)", n)
	}
	_, out = r.do(t, "GET", "/api/v1/messages?channel=home&limit=1", "")
	if m := out["messages"].([]any); len(m) != 1 || m[0].(map[string]any)["text"] != "shh" {
		t.Errorf("limit=1: %v", m)
	}
	code, out = r.do(t, "GET", "/api/v1/trace/last?channel=home", "")
	if code != 200 || out["packet"] == nil {
		t.Fatalf("trace: %d %v", code, out)
	}
}

func TestBadRequests(t *testing.T) {
	r := newRig(t, nil)
	tests := []struct {
		name, method, path, body string
		code                     int
		typ                      string
	}{
		{"not json", "POST", "/api/v1/messages", `{`, 400, "invalid_request"},
		{"no channel", "POST", "/api/v1/messages", `{"text":"x"}`, 400, "invalid_request"},
		{"empty text", "POST", "/api/v1/messages", `{"channel":"c","text":" "}`, 400, "invalid_request"},
		{"bad kind", "POST", "/api/v1/messages", `{"channel":"c","text":"x","kind":"public"}`, 400, "invalid_request"},
		{"too large", "POST", "/api/v1/messages", `{"channel":"c","text":"` + strings.Repeat("x", 70<<10) + `"}`, 413, "too_large"},
		{"list without channel", "GET", "/api/v1/messages", "", 400, "invalid_request"},
		{"bad limit", "GET", "/api/v1/messages?channel=c&limit=0", "", 400, "invalid_request"},
		{"no trace yet", "GET", "/api/v1/trace/last?channel=c", "", 404, "not_found"},
		{"unknown route", "GET", "/nope", "", 404, "not_found"},
		{"openai without user message", "POST", "/v1/chat/completions", `{"messages":[{"role":"system","content":"x"}]}`, 400, "invalid_request"},
		{"openai bad content", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":42}]}`, 400, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := r.do(t, tt.method, tt.path, tt.body)
			if code != tt.code || errType(out) != tt.typ {
				t.Fatalf("%d %v, want %d %s", code, out, tt.code, tt.typ)
			}
			if e := out["error"].(map[string]any); e["message"] == "" {
				t.Fatal("error without a message")
			}
		})
	}
	if n := len(r.fake.Requests()); n != 0 {
		t.Errorf("bad requests reached the model %d times", n)
	}
}

func TestLLMFailureKeepsMessage(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		code  int
		typ   string
	}{
		{"server error", llmtest.Reply{Status: 500}, 502, "llm_error"},
		{"model missing", llmtest.Reply{Status: 404, Body: `{"error":{"message":"model \"x\" not found, try pulling it first"}}`}, 502, "llm_error"},
		{"rate limited", llmtest.Reply{Status: 429, RetryAfter: "3600"}, 503, "llm_unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			r.fake.Enqueue(tt.reply)
			code, out := r.do(t, "POST", "/api/v1/messages", `{"channel":"home","user":"a","text":"keep me"}`)
			e := out["error"].(map[string]any)
			if code != tt.code || e["type"] != tt.typ || e["message_id"] == "" || !strings.Contains(e["message"].(string), "was kept") {
				t.Fatalf("%d %v", code, out)
			}
			_, list := r.do(t, "GET", "/api/v1/messages?channel=home", "")
			if m := list["messages"].([]any); len(m) != 1 || m[0].(map[string]any)["text"] != "keep me" {
				t.Fatalf("message not kept: %v", list)
			}
		})
	}
}

func TestHostCheckAndToken(t *testing.T) {
	r := newRig(t, nil)
	for _, host := range []string{"evil.example:7788", "attacker.com"} {
		if code, out := r.do(t, "GET", "/api/v1/messages?channel=c", "", "Host", host); code != 403 || errType(out) != "forbidden_host" {
			t.Errorf("Host %s: %d %v", host, code, out)
		}
	}
	for _, host := range []string{"localhost:7788", "127.0.0.1:7788", "[::1]:7788", "app.localhost"} {
		if code, _ := r.do(t, "GET", "/healthz", "", "Host", host); code != 200 {
			t.Errorf("Host %s refused: %d", host, code)
		}
	}
	tok := newRig(t, func(o *Options) { o.Token = "0123456789abcdef0123"; o.CheckHost = false })
	if code, _ := tok.do(t, "GET", "/healthz", ""); code != 200 {
		t.Errorf("healthz needs no token: %d", code)
	}
	if code, out := tok.do(t, "GET", "/api/v1/messages?channel=c", ""); code != 401 || errType(out) != "unauthorized" {
		t.Errorf("no token: %d %v", code, out)
	}
	if code, _ := tok.do(t, "GET", "/v1/models", "", "Authorization", "Bearer wrong"); code != 401 {
		t.Errorf("wrong token: %d", code)
	}
	if code, _ := tok.do(t, "GET", "/v1/models", "", "Authorization", "Bearer 0123456789abcdef0123", "Host", "anything.example"); code != 200 {
		t.Errorf("right token: %d", code)
	}
}

func TestOpenAICompatible(t *testing.T) {
	r := newRig(t, nil)
	code, out := r.do(t, "GET", "/v1/models", "")
	if data := out["data"].([]any); code != 200 || data[0].(map[string]any)["id"] != "cyan" {
		t.Fatalf("models: %d %v", code, out)
	}
	r.fake.Enqueue(llmtest.Reply{Text: "one\n@br\ntwo"})
	body := `{"model":"cyan","user":"sam","messages":[{"role":"system","content":"front-end prompt"},{"role":"user","content":"old"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"text","text":"new question"},{"type":"image_url","image_url":{"url":"data:"}}]}]}`
	code, out = r.do(t, "POST", "/v1/chat/completions", body, ChannelHeader, "st")
	if code != 200 || out["object"] != "chat.completion" {
		t.Fatalf("%d %v", code, out)
	}
	msg := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != "one\n\ntwo" || msg["role"] != "assistant" {
		t.Fatalf("message = %v", msg)
	}
	req := r.fake.Requests()[0]
	last := req.Messages[len(req.Messages)-1].Content
	if !strings.HasPrefix(last, "^sam [") || !strings.HasSuffix(last, "]: new question") || strings.Contains(req.System, "front-end prompt") {
		t.Fatalf("the turn did not use only the last user message: %q / %q", last, req.System)
	}
	if _, list := r.do(t, "GET", "/api/v1/messages?channel=st", ""); len(list["messages"].([]any)) != 3 {
		t.Fatalf("channel from X-Cyan-Channel: %v", list)
	}

	// Streamed.
	r.fake.Enqueue(llmtest.Reply{Text: "a\n@br\nb"})
	resp, err := http.Post(r.srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"go"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	var text strings.Builder
	var finish string
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			break
		}
		var ch struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta        struct{ Content string } `json:"delta"`
				FinishReason *string                  `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &ch); err != nil || ch.Object != "chat.completion.chunk" {
			t.Fatalf("bad chunk %q: %v", line, err)
		}
		text.WriteString(ch.Choices[0].Delta.Content)
		if f := ch.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	if !done || finish != "stop" || text.String() != "a\n\nb" {
		t.Fatalf("stream: done=%v finish=%q text=%q", done, finish, text.String())
	}
}

func TestNativeStream(t *testing.T) {
	r := newRig(t, nil)
	r.fake.Enqueue(llmtest.Reply{Text: "x\n@br\ny", ChunkSize: 1})
	resp, err := http.Post(r.srv.URL+"/api/v1/messages", "application/json", strings.NewReader(`{"channel":"c","user":"u","text":"hi","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var names []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "event: "); ok && (len(names) == 0 || names[len(names)-1] != n) {
			names = append(names, n)
		}
	}
	if got := strings.Join(names, ","); got != "message,delta,break,delta,reply,done" {
		t.Fatalf("events = %s", got)
	}
	// Once the message is stored the stream has begun: a failure after it
	// is an "error" event that still names the kept message.
	r.fake.Enqueue(llmtest.Reply{Status: 500})
	resp2, err := http.Post(r.srv.URL+"/api/v1/messages", "application/json", strings.NewReader(`{"channel":"c","user":"u","text":"hi","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	raw, _ := io.ReadAll(resp2.Body)
	if !strings.Contains(string(raw), "event: message\n") || !strings.Contains(string(raw), "event: error\ndata: {\"error\":{\"message\":\"your message was kept") {
		t.Fatalf("stream after a failure: %s", raw)
	}
}

// TestAFullDiskAnswers507: a store that must keep more free space than its
// disk has refuses every write; the API says so with 507 and the folder,
// keeps answering reads, and never says "internal error".
func TestAFullDiskAnswers507(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	st, err := store.Open(store.Options{Dir: dir, MinFree: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	_, client := llmtest.Start(t)
	p, _ := persona.Default()
	mv, err := mainvirtual.New(mainvirtual.Options{Store: st, LLM: client, Persona: func() *persona.Persona { return p }, Agent: config.Defaults().Agent})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Agent: mv, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	r := &rig{server: s, srv: srv}
	for _, c := range []struct{ path, body string }{
		{"/api/v1/messages", `{"channel":"home","text":"hello"}`},
		{"/api/v1/messages", `{"channel":"home","text":"hello","stream":true}`},
		{"/api/v1/import", `{"messages":[{"time":"2025-01-02T10:00:00Z","channel":"old","text":"one"}]}`},
	} {
		code, out := r.do(t, "POST", c.path, c.body)
		e, _ := out["error"].(map[string]any)
		msg := fmt.Sprint(e["message"])
		if code != http.StatusInsufficientStorage || e["type"] != "disk_full" || !strings.Contains(msg, dir) || !strings.Contains(msg, "Free some space") {
			t.Errorf("POST %s %s: %d %v", c.path, c.body, code, out)
		}
	}
	if code, out := r.do(t, "GET", "/api/v1/messages?channel=home", ""); code != 200 {
		t.Fatalf("reads on a full disk: %d %v", code, out)
	}
}
