package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/notation"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/script"
)

// answerByFormat makes the fake LLM answer the event log's calls by their
// response format, and chat with "ok".
func answerByFormat(req llmtest.Request) llmtest.Reply {
	rf := string(req.ResponseFormat)
	switch {
	case strings.Contains(rf, events.ScriptTitle):
		return llmtest.Reply{Text: `{"title":"alice said hello","importance":0.6,"includes":[]}`}
	case strings.Contains(rf, events.ScriptSummary):
		return llmtest.Reply{Text: `{"title":"a day of greetings","importance":0.3}`}
	case strings.Contains(rf, events.ScriptExtract):
		return llmtest.Reply{Text: `{"facts":[{"object":"alice","kind":"person","text":"says hello a lot"}],"lines":[{"a":"alice","b":"青蓝","text":"greets me every day","strength":0.4}],"reinforce":[],"contradict":[]}`}
	}
	return llmtest.Reply{Text: "ok"}
}

func TestEventRoutes(t *testing.T) {
	r := newRig(t, nil)
	// Build the log on the rig's store, writing through the rig's fake LLM.
	r.fake.SetDefault(answerByFormat)
	client, _ := llm.New(llm.Options{BaseURL: r.fakeURL + "/v1", Model: "fake-model", MaxRetries: -1})
	gen, err := generate.New(generate.Options{LLM: client})
	if err != nil {
		t.Fatal(err)
	}
	lib, err := script.NewLibrary(script.LibraryOptions{Generator: gen})
	if err != nil {
		t.Fatal(err)
	}
	log, err := events.New(events.Options{Store: r.st, Config: config.Defaults().Events, Writer: events.NewScriptWriter(lib),
		AgentName: func() string { return "青蓝" }, Escape: notation.Escape})
	if err != nil {
		t.Fatal(err)
	}
	r.server.o.Events = log

	if code, out := r.do(t, "POST", "/api/v1/messages", `{"channel":"home","user":"alice","text":"hello"}`); code != 200 {
		t.Fatalf("post: %d %v", code, out)
	}
	later := time.Now().Add(48 * time.Hour).Format(time.RFC3339)
	code, out := r.do(t, "POST", "/api/v1/events/rollup", `{"now":"`+later+`"}`)
	if code != 200 || out["closed"] != 1.0 || out["titled"] != 1.0 || len(out["rollups"].([]any)) == 0 {
		t.Fatalf("rollup: %d %v", code, out)
	}
	code, out = r.do(t, "GET", "/api/v1/events?level=event", "")
	evs, _ := out["events"].([]any)
	if code != 200 || len(evs) != 1 {
		t.Fatalf("events: %d %v", code, out)
	}
	e := evs[0].(map[string]any)
	for _, k := range []string{"id", "level", "title", "importance", "memory_state", "start", "end", "source", "children"} {
		if _, ok := e[k]; !ok {
			t.Errorf("event lacks %q: %v", k, e)
		}
	}
	if src := e["source"].(map[string]any); src["channel"] != "home" || src["first_message_id"] == "" || e["title"] != "alice said hello" {
		t.Fatalf("event %v", e)
	}
	if _, out = r.do(t, "GET", "/api/v1/events?level=day&channel=home", ""); len(out["events"].([]any)) != 1 {
		t.Fatalf("day records %v", out)
	}
	if _, out = r.do(t, "GET", "/api/v1/objects", ""); len(out["objects"].([]any)) != 2 {
		t.Fatalf("objects %v", out)
	}
	if _, out = r.do(t, "GET", "/api/v1/relations", ""); len(out["relations"].([]any)) != 1 {
		t.Fatalf("relations %v", out)
	}
	if code, out = r.do(t, "GET", "/api/v1/theories", ""); code != 200 || len(out["theories"].([]any)) != 0 {
		t.Fatalf("theories %d %v", code, out)
	}
	for _, bad := range []struct{ method, path, body string }{
		{"GET", "/api/v1/events?level=decade", ""},
		{"GET", "/api/v1/events?limit=0", ""},
		{"POST", "/api/v1/events/rollup", `{"now":"yesterday"}`},
		{"POST", "/api/v1/events/build", `{"channel":""}`},
		{"POST", "/api/v1/events/build", `{"channel":"home","from":"soon"}`},
	} {
		if code, out := r.do(t, bad.method, bad.path, bad.body); code != http.StatusBadRequest {
			t.Errorf("%s %s %s: %d %v", bad.method, bad.path, bad.body, code, out)
		}
	}
	if code, out := r.do(t, "POST", "/api/v1/events/build", `{"channel":"home"}`); code != 200 || out["kept"] != 1.0 {
		t.Fatalf("build: %d %v", code, out)
	}

	r.server.o.Events = nil
	if code, _ := r.do(t, "GET", "/api/v1/objects", ""); code != http.StatusServiceUnavailable {
		t.Fatalf("no event log: %d", code)
	}
}
