package api

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/llm"
)

func TestTraceRoutes(t *testing.T) {
	var traces *generate.Traces
	var gen *generate.Generator
	r := newRig(t, func(o *Options) {
		var err error
		traces, err = generate.OpenTraces(o.Store, 10)
		if err != nil {
			t.Fatal(err)
		}
		o.Traces = traces
	})
	client, _ := llm.New(llm.Options{BaseURL: "http://127.0.0.1:1/v1", Model: "m", MaxRetries: -1})
	gen, _ = generate.New(generate.Options{LLM: client, Traces: traces, Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }})
	var ids []string
	for i, ch := range []string{"home", "work", "home"} {
		// No model answers: each call fails and still leaves a trace.
		_, err := gen.Generate(context.Background(), generate.Request{Name: fmt.Sprint("n", i), Channel: ch, Input: "x"})
		ge := err.(*generate.Error)
		ids = append(ids, ge.TraceID)
	}
	code, out := r.do(t, "GET", "/api/v1/traces?channel=home&last=5", "")
	list, _ := out["traces"].([]any)
	if code != 200 || len(list) != 2 || list[0].(map[string]any)["name"] != "n0" || list[1].(map[string]any)["ok"] != false {
		t.Fatalf("list: %d %v", code, out)
	}
	code, out = r.do(t, "GET", "/api/v1/traces", "")
	if list, _ := out["traces"].([]any); code != 200 || len(list) != 3 {
		t.Fatalf("all: %d %v", code, out)
	}
	code, out = r.do(t, "GET", "/api/v1/traces/"+ids[1], "")
	if code != 200 || out["channel"] != "work" || out["kind"] != "generate" || out["error"] == "" {
		t.Fatalf("get: %d %v", code, out)
	}
	for _, tt := range []struct {
		path string
		code int
	}{
		{"/api/v1/traces?last=0", 400}, {"/api/v1/traces?last=x", 400}, {"/api/v1/traces?channel=a%0Ab", 400},
		{"/api/v1/traces/nope", 400}, {"/api/v1/traces/0193a6b0-0000-7000-8000-000000000000", 404},
	} {
		if code, out := r.do(t, "GET", tt.path, ""); code != tt.code || out["error"] == nil {
			t.Errorf("%s: %d %v", tt.path, code, out)
		}
	}
	// A daemon without a ring says so.
	r2 := newRig(t, nil)
	if code, _ := r2.do(t, "GET", "/api/v1/traces", ""); code != 404 {
		t.Errorf("no ring: %d", code)
	}
}
