package api

import (
	"context"
	"sync"
	"testing"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/tools"
)

// Two answers to one approval get one result and a clear 409, never a 500.
func TestTwoAnswersToOneApproval(t *testing.T) {
	reg := tools.New(tools.Options{})
	if err := reg.Register(packets.Tool{ToolSpec: packets.ToolSpec{Name: "w", Description: "d", Kind: packets.ToolProcess, Effects: []string{packets.EffectWrite}},
		Run: func(context.Context, *packets.ToolCall) (packets.Result, error) {
			return packets.Result{OutputText: "done"}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, func(o *Options) { o.Tools = reg })
	reg.EnableApprovals(tools.ApprovalOptions{Store: r.st})
	o := reg.Call(context.Background(), packets.Caller{Channel: "home", Kind: "private"}, "w", nil)
	if o.Approval == "" {
		t.Fatalf("not parked: %+v", o)
	}
	const n = 8
	codes := make([]int, n)
	outs := make([]map[string]any, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], outs[i] = r.do(t, "POST", "/api/v1/approvals/"+o.Approval, `{"allow": true}`)
		}()
	}
	wg.Wait()
	ok := 0
	for i, c := range codes {
		switch c {
		case 200:
			ok++
		case 409:
			if e, _ := outs[i]["error"].(map[string]any); e == nil || e["type"] != "answered" {
				t.Errorf("409 without the answered type: %v", outs[i])
			}
		default:
			t.Errorf("answer %d: %d %v", i, c, outs[i])
		}
	}
	if ok != 1 {
		t.Fatalf("%d answers took effect, want 1: %v", ok, codes)
	}
	if c, out := r.do(t, "POST", "/api/v1/approvals/"+o.Approval, `{"allow": false}`); c != 409 {
		t.Fatalf("a later answer: %d %v", c, out)
	}
}
