package api

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
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
