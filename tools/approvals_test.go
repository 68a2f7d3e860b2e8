package tools

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
)

// Of many answers to one approval at once, one runs the call and stores
// its result; every other gets ErrAnswered, saying how the first went —
// and so does an answer that comes later.
func TestApprovalAnsweredOnce(t *testing.T) {
	st, err := store.Open(store.Options{Dir: t.TempDir()})
	must(t, err)
	defer st.Close()
	var runs atomic.Int32
	r := New(Options{})
	must(t, r.Register(packets.Tool{ToolSpec: packets.ToolSpec{Name: "w", Description: "d", Kind: packets.ToolProcess, Effects: []string{packets.EffectWrite}},
		Run: func(context.Context, *packets.ToolCall) (packets.Result, error) {
			runs.Add(1)
			return packets.Result{OutputText: "done"}, nil
		}}))
	ap := r.EnableApprovals(ApprovalOptions{Store: st})
	o := r.Call(context.Background(), packets.Caller{Channel: "home", Kind: "private", CallID: "c1"}, "w", nil)
	if o.Approval == "" {
		t.Fatalf("not parked: %+v", o)
	}
	const n = 16
	var wg sync.WaitGroup
	var won atomic.Int32
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ap.Answer(context.Background(), o.Approval, i%2 == 0)
			if err == nil {
				won.Add(1)
				return
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	if won.Load() != 1 {
		t.Fatalf("%d answers took effect, want 1", won.Load())
	}
	for err := range errs {
		if !errors.Is(err, ErrAnswered) {
			t.Errorf("a second answer: %v, want ErrAnswered", err)
		}
	}
	if runs.Load() > 1 {
		t.Fatalf("the call ran %d times", runs.Load())
	}
	ms, _ := st.Recent("home", store.Window{Limit: 10})
	if len(ms) != 1 {
		t.Fatalf("%d results stored, want 1: %+v", len(ms), ms)
	}
	_, err = ap.Answer(context.Background(), o.Approval, true)
	if !errors.Is(err, ErrAnswered) || !(strings.Contains(err.Error(), "allowed at") || strings.Contains(err.Error(), "denied at")) {
		t.Fatalf("a later answer: %v", err)
	}
	if _, err := ap.Answer(context.Background(), "nosuchid", true); !errors.Is(err, ErrNoApproval) {
		t.Fatalf("an unknown id: %v", err)
	}
}

// An answer after a restart is told the approval was answered (how, and
// when), not that there is no such approval; the marks are not pending
// approvals, and a sweep leaves them.
func TestApprovalAnsweredOnceAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: dir})
	must(t, err)
	var runs atomic.Int32
	registry := func() *Registry {
		r := New(Options{})
		must(t, r.Register(packets.Tool{ToolSpec: packets.ToolSpec{Name: "w", Description: "d", Kind: packets.ToolProcess, Effects: []string{packets.EffectWrite}},
			Run: func(context.Context, *packets.ToolCall) (packets.Result, error) {
				runs.Add(1)
				return packets.Result{OutputText: "done"}, nil
			}}))
		return r
	}
	r := registry()
	ap := r.EnableApprovals(ApprovalOptions{Store: st})
	o := r.Call(context.Background(), packets.Caller{Channel: "home", Kind: "private", CallID: "c1"}, "w", nil)
	if o.Approval == "" {
		t.Fatalf("not parked: %+v", o)
	}
	if _, err := ap.Answer(context.Background(), o.Approval, true); err != nil {
		t.Fatal(err)
	}
	must(t, st.Close())

	st, err = store.Open(store.Options{Dir: dir})
	must(t, err)
	defer st.Close()
	r = registry()
	ap = r.EnableApprovals(ApprovalOptions{Store: st})
	must(t, ap.Sweep())
	if p, err := ap.Pending(); err != nil || len(p) != 0 {
		t.Fatalf("pending after the answer: %+v, %v", p, err)
	}
	_, err = ap.Answer(context.Background(), o.Approval, false)
	if !errors.Is(err, ErrAnswered) || !strings.Contains(err.Error(), "allowed at") {
		t.Fatalf("a second answer after a restart: %v, want ErrAnswered saying it was allowed", err)
	}
	if _, err := ap.Answer(context.Background(), "\x00"+o.Approval, false); !errors.Is(err, ErrNoApproval) {
		t.Fatalf("an id naming a mark: %v", err)
	}
	if runs.Load() != 1 {
		t.Fatalf("the call ran %d times", runs.Load())
	}
	ms, _ := st.Recent("home", store.Window{Limit: 10})
	if len(ms) != 1 {
		t.Fatalf("%d results stored, want 1: %+v", len(ms), ms)
	}
}
