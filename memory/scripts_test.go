package memory

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
)

// TestStepsRunTheBuiltinScripts runs remember, active GC's compression and
// a context_operation in plain words through the built-in prompt scripts
// on the fake LLM: each request is compared with its golden file under
// testdata/scripts, each answer lands in the workspace, and each call is
// traced under its channel.
func TestStepsRunTheBuiltinScripts(t *testing.T) {
	rig := scripttest.New(t, scripttest.Options{})
	cfg := testConfig()
	m, err := Open(Options{Store: memStore(t), Config: cfg, Natural: rig.Lib, AgentName: func() string { return "青蓝" },
		Now: func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m.Add(KindNote, "alice is learning Japanese for a trip to Kyoto in April", private)

	rig.Fake.Enqueue(llmtest.Reply{Text: `{"action": "add", "kind": "info", "content": "the API allows 60 requests per minute", "source": ["the API docs"]}`})
	out, err := call(m, ctx, "remember", "home", "", `{"text":"the API docs say 60 requests a minute"}`)
	if err != nil || !strings.Contains(out, "w2 (info)") {
		t.Fatalf("remember = %q, %v", out, err)
	}
	rig.Fake.Enqueue(llmtest.Reply{Text: `{"ops": [{"op": "pin", "id": "w2"}]}`})
	if out, err := call(m, ctx, "context_operation", "home", "", `{"text":"keep the API limit around"}`); err != nil || out != "pinned w2" {
		t.Fatalf("context_operation = %q, %v", out, err)
	}
	// Over budget: the weakest unpinned item is shortened by compress_item,
	// and that is enough.
	_, trace := m.WorkspaceSection(Viewer{Channel: "home"}, 1000)
	total := 0
	for _, it := range trace {
		total += it.Tokens
	}
	m.cfg.Budget = total - 2
	rig.Fake.Enqueue(llmtest.Reply{Text: `{"summary": "alice: Japanese for Kyoto, April"}`})
	events, err := m.ActiveGC(ctx, Viewer{Channel: "home"})
	if err != nil || len(events) == 0 || events[0].Action != "compressed" {
		t.Fatalf("active GC: %+v %v", events, err)
	}
	if v, _ := m.Get("w1"); v.Content != "alice: Japanese for Kyoto, April" {
		t.Fatalf("w1 = %q", v.Content)
	}
	// In a channel whose workspace is empty, the script gets no listing.
	rig.Fake.Enqueue(llmtest.Reply{Text: `{"action": "add", "kind": "note", "content": "bob plays go"}`})
	if out, err := call(m, ctx, "remember", "telegram:9", "", `{"text":"bob plays go"}`); err != nil || !strings.Contains(out, "bob plays go") {
		t.Fatalf("remember in an empty workspace = %q, %v", out, err)
	}
	if reqs := rig.Named(ScriptRemember); len(reqs) != 2 || strings.Contains(reqs[1].Messages[1].Content, "[items that may say the same]") {
		t.Fatalf("remember with an empty workspace: %d requests", len(reqs))
	}
	for _, name := range []string{ScriptRemember, ScriptContextOperation, ScriptCompress} {
		reqs := rig.Named(name)
		if name == ScriptRemember {
			reqs = reqs[:1]
		}
		if len(reqs) != 1 {
			t.Fatalf("%s: %d requests", name, len(reqs))
		}
		scripttest.Golden(t, "scripts/"+name+".golden", scripttest.Render(reqs[0]))
		if list, _ := rig.Traces.List(generate.Filter{Channel: "home", Name: name}); len(list) != 1 {
			t.Errorf("%s: %d traces in channel home", name, len(list))
		}
	}
}

// Nothing the companion is told to remember is lost: bob's and carol's
// numbers are two items, whether the model says "add" for the second or
// wrongly says it is the same as the first; a repeat in the same words
// strengthens its item without asking the model, and the result quotes
// that item.
func TestRememberNeverDropsADistinctFact(t *testing.T) {
	for _, tc := range []struct {
		name, second string
		wantApart    bool
	}{
		{"the model adds", `{"action": "add", "kind": "note", "content": "carol's number is 555-1234"}`, false},
		{"the model says same", `{"action": "strengthen", "kind": "note", "content": "bob's number is 555-0000", "id": "w1"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := scripttest.New(t, scripttest.Options{})
			m, err := Open(Options{Store: memStore(t), Config: testConfig(), Natural: rig.Lib, AgentName: func() string { return "青蓝" }})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			rig.Fake.Enqueue(llmtest.Reply{Text: `{"action": "add", "kind": "note", "content": "bob's number is 555-0000"}`})
			if out, err := call(m, ctx, "remember", "home", "", `{"text":"bob's number is 555-0000"}`); err != nil || !strings.Contains(out, "w1") {
				t.Fatalf("first remember = %q, %v", out, err)
			}
			rig.Fake.Enqueue(llmtest.Reply{Text: tc.second})
			out, err := call(m, ctx, "remember", "home", "", `{"text":"carol's number is 555-1234"}`)
			if err != nil || !strings.Contains(out, "w2") || !strings.Contains(out, "555-1234") {
				t.Fatalf("second remember = %q, %v", out, err)
			}
			if apart := strings.Contains(out, `kept apart from w1 ("bob's number is 555-0000")`); apart != tc.wantApart {
				t.Fatalf("second remember = %q; want the kept-apart note: %v", out, tc.wantApart)
			}
			section, _ := m.WorkspaceSection(Viewer{Channel: "home"}, 1000)
			if !strings.Contains(section, "555-0000") || !strings.Contains(section, "555-1234") {
				t.Fatalf("workspace lost a number:\n%s", section)
			}
			// The step saw bob's item as a candidate and the recent talk.
			if reqs := rig.Named(ScriptRemember); !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Content+reqs[1].Messages[1].Content, "bob's number is 555-0000") {
				t.Fatalf("the remember step did not see the candidate: %+v", reqs[1].Messages)
			}
			// A near repeat that adds a word ("phone") is kept too, even
			// when the model calls it the same: the result names the item.
			rig.Fake.Enqueue(llmtest.Reply{Text: `{"action": "strengthen", "kind": "note", "content": "carol's number is 555-1234", "id": "w2"}`})
			out, err = call(m, ctx, "remember", "home", "", `{"text":"carol's phone number is 555-1234"}`)
			if err != nil || !strings.Contains(out, `remembered as w3`) || !strings.Contains(out, `kept apart from w2 ("carol's number is 555-1234")`) {
				t.Fatalf("near repeat = %q, %v", out, err)
			}
			// The same words again need no model call at all.
			before := len(rig.Named(ScriptRemember))
			out, err = call(m, ctx, "remember", "home", "", `{"text":"Bob's number is 555-0000."}`)
			if err != nil || !strings.Contains(out, `already remembered as w1: "bob's number is 555-0000"`) || len(rig.Named(ScriptRemember)) != before {
				t.Fatalf("same words = %q, %v", out, err)
			}
			if items := m.Items(true); len(items) != 3 {
				t.Fatalf("%d items, want 3", len(items))
			}
		})
	}
}
