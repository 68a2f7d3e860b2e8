package api

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
)

// TestACutAnswerIsNotAWholeOne: when the model's server stops mid-answer
// (Ollama's runner dies: no finish chunk, no [DONE]), the OpenAI-compatible
// stream ends with finish_reason "error", not "stop"; the messages stream
// sends "cut"; the shown part is stored marked incomplete.
func TestACutAnswerIsNotAWholeOne(t *testing.T) {
	r := newRig(t, nil)
	read := func(resp *http.Response, each func(event, data string)) {
		t.Helper()
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				event = e
			}
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				each(event, d)
			}
		}
	}

	r.fake.Enqueue(llmtest.Reply{Server: llmtest.Ollama, Text: "The first half. and the", CutAfter: 16})
	resp, err := http.Post(r.srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"go"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	finish := ""
	read(resp, func(_, d string) {
		var ch struct {
			Choices []struct {
				Delta        struct{ Content string } `json:"delta"`
				FinishReason *string                  `json:"finish_reason"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(d), &ch) == nil && len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Delta.Content)
			if f := ch.Choices[0].FinishReason; f != nil {
				finish = *f
			}
		}
	})
	if finish != "error" || !strings.HasPrefix("The first half. and the", text.String()) || text.Len() == 0 {
		t.Fatalf("finish %q, text %q", finish, text.String())
	}

	r.fake.Enqueue(llmtest.Reply{Server: llmtest.Ollama, Text: "Another half. and", CutAfter: 12})
	resp, err = http.Post(r.srv.URL+"/api/v1/messages", "application/json", strings.NewReader(`{"channel":"cut","text":"go","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	cut := ""
	read(resp, func(e, d string) {
		if e == "cut" {
			cut = d
		}
	})
	if !strings.Contains(cut, "mid-answer") {
		t.Fatalf("no cut event: %q", cut)
	}
	_, list := r.do(t, "GET", "/api/v1/messages?channel=cut", "")
	msgs := list["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["incomplete"] != true || last["role"] != "assistant" {
		t.Fatalf("the shown part is not stored marked incomplete: %v", last)
	}
}
