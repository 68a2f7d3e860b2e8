package api

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/metrics"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/store"
)

func TestIdempotentMessages(t *testing.T) {
	r := newRig(t, nil)
	r.fake.Enqueue(llmtest.Reply{Text: "hello back"})
	code, first := r.do(t, "POST", "/api/v1/messages", `{"channel":"home","text":"hello"}`, IdempotencyHeader, "9a1c")
	if code != 200 || first["replayed"] != nil {
		t.Fatalf("first: %d %v", code, first)
	}
	for _, retry := range []struct{ body, key string }{
		{`{"channel":"home","text":"hello"}`, "9a1c"},
		{`{"channel":"home","text":"hello","message_id":"9a1c"}`, ""},
		{`{"channel":"home","text":"hello","message_id":"9a1c"}`, "9a1c"},
	} {
		var hdr []string
		if retry.key != "" {
			hdr = []string{IdempotencyHeader, retry.key}
		}
		code, out := r.do(t, "POST", "/api/v1/messages", retry.body, hdr...)
		if code != 200 || out["replayed"] != true || out["message_id"] != first["message_id"] || fmt.Sprint(out["replies"]) != "[hello back]" {
			t.Fatalf("retry %v: %d %v", retry, code, out)
		}
	}
	// A streamed retry replays too.
	resp := r.stream(t, `{"channel":"home","text":"hello","stream":true,"message_id":"9a1c"}`)
	if !strings.Contains(resp, "event: message") || !strings.Contains(resp, `"text":"hello back"`) || !strings.Contains(resp, `"replayed":true`) {
		t.Fatalf("streamed retry:\n%s", resp)
	}
	if n := len(r.fake.Requests()); n != 1 {
		t.Fatalf("the model was called %d times", n)
	}
	_, list := r.do(t, "GET", "/api/v1/messages?channel=home", "")
	if n := len(list["messages"].([]any)); n != 2 {
		t.Fatalf("the channel holds %d messages, want 2", n)
	}
	for _, bad := range []struct{ body, key, want string }{
		{`{"channel":"home","text":"hello","message_id":"a"}`, "b", "differ"},
		{`{"channel":"home","text":"hello"}`, strings.Repeat("k", 300), "limit is 255"},
		{`{"channel":"home","text":"other words"}`, "9a1c", "says something else"},
	} {
		code, out := r.do(t, "POST", "/api/v1/messages", bad.body, IdempotencyHeader, bad.key)
		if e, _ := out["error"].(map[string]any); code != 400 || !strings.Contains(fmt.Sprint(e["message"]), bad.want) {
			t.Errorf("%s with key %.10q: %d %v", bad.body, bad.key, code, out)
		}
	}
}

func (r *rig) stream(t *testing.T, body string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", r.srv.URL+"/api/v1/messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func TestIdempotentImport(t *testing.T) {
	r := newRig(t, nil)
	batch := `{"messages":[{"time":"2025-01-02T10:00:00Z","channel":"old","user":"ann","text":"one"},{"time":"2025-01-02T10:01:00Z","channel":"old","user":"bob","text":"two"}]}`
	code, out := r.do(t, "POST", "/api/v1/import", batch, IdempotencyHeader, "batch-1")
	if code != 200 || out["added"] != 2.0 || out["skipped"] != 0.0 {
		t.Fatalf("first: %d %v", code, out)
	}
	code, out = r.do(t, "POST", "/api/v1/import", batch, IdempotencyHeader, "batch-1")
	if code != 200 || out["added"] != 2.0 || out["skipped"] != 0.0 {
		t.Fatalf("retry must repeat the first answer: %d %v", code, out)
	}
	code, out = r.do(t, "POST", "/api/v1/import", batch, IdempotencyHeader, "batch-2")
	if code != 200 || out["added"] != 0.0 || out["skipped"] != 2.0 {
		t.Fatalf("the same lines as a new batch: %d %v", code, out)
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

// TestMetricsNeedTheToken: /metrics is behind the same rule as the API.
func TestMetricsNeedTheToken(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	r := newRig(t, func(o *Options) { o.Token, o.CheckHost, o.Metrics = token, false, metrics.New() })
	if code, _ := r.do(t, "GET", "/metrics", ""); code != http.StatusUnauthorized {
		t.Fatalf("without the token: %d", code)
	}
	req, _ := http.NewRequest("GET", r.srv.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("with the token: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestChatCompletionsIdempotent: the OpenAI-compatible route takes an
// Idempotency-Key too; a streamed retry gets the first answer's text.
func TestChatCompletionsIdempotent(t *testing.T) {
	r := newRig(t, nil)
	r.fake.Enqueue(llmtest.Reply{Text: "the answer"})
	body := `{"model":"cyan","messages":[{"role":"user","content":"a question"}]}`
	code, out := r.do(t, "POST", "/v1/chat/completions", body, IdempotencyHeader, "oa-1")
	if code != 200 || !strings.Contains(fmt.Sprint(out["choices"]), "the answer") {
		t.Fatalf("first: %d %v", code, out)
	}
	req, _ := http.NewRequest("POST", r.srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"cyan","stream":true,"messages":[{"role":"user","content":"a question"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(IdempotencyHeader, "oa-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), `"content":"the answer"`) || !strings.Contains(string(raw), "[DONE]") {
		t.Fatalf("streamed retry:\n%s", raw)
	}
	if n := len(r.fake.Requests()); n != 1 {
		t.Fatalf("the model was called %d times", n)
	}
}
