package recall

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
)

func TestToolModeRewritesTheRequest(t *testing.T) {
	fake, judge, rig := fakeJudge(t)
	x, st := newTestIndex(t, Options{Judge: judge, Rewrite: true, VectorWeight: hybridOff})
	fillHistory(t, st)
	syncIndex(t, x)
	// A two-part request that shares no word with what was said; the
	// rewrite names both parts.
	fake.Enqueue(
		llmtest.Reply{Text: `{"queries": ["cherry trees walk", "exam schedule", " Cherry trees walk "]}`},
		llmtest.Reply{Text: `{"keep": [1, 2], "give_up": false}`},
		llmtest.Reply{Text: `{"summarized_info": "a walk under the cherry trees; the exam schedule is on the board"}`},
	)
	r, err := x.Recall(context.Background(), Query{Prompt: "our plans outdoors and at school", MaxResults: 2}, ModeTool)
	if err != nil {
		t.Fatal(err)
	}
	calls := chats(fake)
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want rewrite, filter, summary: %v %+v", len(calls), scripttest.FormatName(calls[0]), r)
	}
	for i, name := range []string{ScriptRewrite, ScriptFilter, ScriptSummary} {
		if got := scripttest.FormatName(calls[i]); got != name {
			t.Errorf("call %d runs %q, want %q", i, got, name)
		}
	}
	if !slices.Equal(r.Queries, []string{"cherry trees walk", "exam schedule"}) {
		t.Errorf("queries %q: want the two distinct ones", r.Queries)
	}
	var all string
	for _, res := range r.Results {
		all += res.Text + "\n"
	}
	if len(r.Results) != 2 || !strings.Contains(all, "cherry trees") || !strings.Contains(all, "exam schedule") {
		t.Fatalf("each part of the request gets a passage: %q (note %q)", all, r.Note)
	}
	if list, err := rig.Traces.List(generate.Filter{}); err != nil || len(list) != 3 {
		t.Fatalf("every call is traced, the rewrite too: %d %v", len(list), err)
	}

	// A rewrite that fails leaves the request searched as it is.
	fake.Reset()
	fake.Enqueue(
		llmtest.Reply{Status: 500}, llmtest.Reply{Status: 500}, llmtest.Reply{Status: 500},
		llmtest.Reply{Status: 500}, llmtest.Reply{Status: 500}, llmtest.Reply{Status: 500},
		llmtest.Reply{Text: `{"keep": [1], "give_up": false}`},
		llmtest.Reply{Text: `{"summarized_info": "the exam schedule is on the board"}`},
	)
	r, err = x.Recall(context.Background(), Query{Prompt: "exam schedule", MaxResults: 1}, ModeTool)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 1 || len(r.Queries) != 0 || !strings.Contains(r.Note, "searched as it is") {
		t.Fatalf("after a failed rewrite: %d results, queries %q, note %q", len(r.Results), r.Queries, r.Note)
	}
}
