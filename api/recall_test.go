package api

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/recall"
)

func TestImportAndRecall(t *testing.T) {
	var x *recall.Index
	r := newRig(t, func(o *Options) {
		var err error
		x, err = recall.New(recall.Options{Store: o.Store})
		if err != nil {
			t.Fatal(err)
		}
		o.Recall = x
	})
	from := r.st.Journal().Last()
	body := `{"messages": [
		{"time": "2024-05-01T21:30:00+08:00", "channel": "home", "user": "nyalia", "text": "my physics exam is on friday", "id": "a1"},
		{"time": "2024-05-01T21:31:00+08:00", "channel": "home", "user": "cyan", "role": "assistant", "text": "you will do fine, let's review optics", "id": "a2"},
		{"time": "2024-06-01T10:00:00+08:00", "channel": "home", "user": "nyalia", "text": "the park was lovely", "id": "a3"}
	], "final": true}`
	code, out := r.do(t, "POST", "/api/v1/import", body)
	if code != 200 || out["added"] != 3.0 || out["skipped"] != 0.0 {
		t.Fatalf("import: %d %v", code, out)
	}
	code, out = r.do(t, "POST", "/api/v1/import", body)
	if code != 200 || out["added"] != 0.0 || out["skipped"] != 3.0 {
		t.Fatalf("second import must add nothing: %d %v", code, out)
	}
	// Each batch is on the journal with the times it covers and its final
	// mark, the one run again too (its history's events are built again).
	evs, err := r.st.Journal().Since(from, journal.Filter{Kinds: []journal.Kind{journal.MessagesImported}}, 0)
	var batches []journal.Imported
	for _, e := range evs {
		var im journal.Imported
		if err := e.Decode(&im); err != nil {
			t.Fatal(err)
		}
		batches = append(batches, im)
	}
	if err != nil || len(batches) != 2 || batches[0].Added != 3 || batches[1].Skipped != 3 || !batches[0].Final || !batches[1].Final ||
		len(batches[1].Spans) != 1 || batches[1].Spans[0].Channel != "home" || batches[1].Spans[0].From.Month() != 5 || batches[1].Spans[0].To.Month() != 6 {
		t.Fatalf("the journal's imports: %+v %v", batches, err)
	}
	if err := x.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}

	code, out = r.do(t, "POST", "/api/v1/recall", `{"prompt": "physics exam", "max_results": 1, "mode": "search", "until": "2024-05-15"}`)
	if code != 200 {
		t.Fatalf("recall: %d %v", code, out)
	}
	results := out["results"].([]any)
	if len(results) != 1 {
		t.Fatalf("results: %v", out)
	}
	res := results[0].(map[string]any)
	if !strings.Contains(res["text"].(string), "physics exam") || res["location"] == "" || res["source"] == "" || res["kind"] != "messages" {
		t.Fatalf("result: %v", res)
	}
	if ids := res["external_ids"].([]any); len(ids) == 0 || ids[0] != "a1" {
		t.Fatalf("external_ids: %v", res["external_ids"])
	}
	if _, ok := out["summarized_info"]; !ok {
		t.Fatal("summarized_info missing")
	}
	if code, _ := r.do(t, "GET", "/api/v1/recall/status", ""); code != 200 {
		t.Fatalf("status: %d", code)
	}

	for _, tc := range []struct{ body, want string }{
		{`{"prompt": ""}`, "prompt is empty"},
		{`{"prompt": "x", "since": "last tuesday"}`, "RFC 3339"},
		{`{"prompt": "x", "mode": "dream"}`, "mode"},
		{`{"prompt": "x", "score_threshold": 300}`, "0–100"},
	} {
		code, out := r.do(t, "POST", "/api/v1/recall", tc.body)
		if code != 400 || !strings.Contains(fmt.Sprint(out["error"]), tc.want) {
			t.Errorf("%s: %d %v, want 400 mentioning %q", tc.body, code, out, tc.want)
		}
	}
	code, out = r.do(t, "POST", "/api/v1/import", `{"messages": [{"time": "2024-05-01T00:00:00Z", "channel": "c", "text": "ok"}, {"time": "bad", "channel": "c", "text": "x"}]}`)
	if code != 400 || !strings.Contains(fmt.Sprint(out["error"]), "message 2") {
		t.Fatalf("a bad batch: %d %v", code, out)
	}
}

func TestRecallWithoutIndex(t *testing.T) {
	r := newRig(t, nil)
	if code, _ := r.do(t, "POST", "/api/v1/recall", `{"prompt": "x"}`); code != 503 {
		t.Fatalf("recall without an index: %d", code)
	}
}
