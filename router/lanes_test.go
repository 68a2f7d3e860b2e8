package router

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// A lane whose head keeps failing (a muted chat) holds up only its own
// packets: the other lanes are delivered meanwhile, each in order, and the
// failing lane resumes in order once it recovers; across a re-attach
// (a restart) nothing is delivered twice.
func TestAttachLanesKeepsOrderPerLaneAndNeverWaitsOnAnother(t *testing.T) {
	db := openDB(t, t.TempDir())
	r := openRouter(t, db)
	if err := r.Subscribe("c", []string{"*"}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string][]string{}
	down := true
	blocked := make(chan struct{})
	release := make(chan struct{})
	delivered := make(chan string, 100)
	comp := ComponentFunc(func(ctx context.Context, d Delivery) error {
		if d.Channel == "slow" && d.Text == "s1" && d.Attempt == 1 {
			close(blocked)
			select { // a long wait in one lane (a mute)
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if d.Channel == "flaky" && down {
			return errors.New("muted")
		}
		got[d.Channel] = append(got[d.Channel], d.Text)
		delivered <- d.Key
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.AttachLanes(ctx, "c", comp, ByChannel) }()
	publish(t, r, "slow", "s1", "s2")
	publish(t, r, "flaky", "f1", "f2")
	publish(t, r, "fast", "a1", "a2", "a3")
	<-blocked
	for range 3 {
		select {
		case <-delivered:
		case <-time.After(10 * time.Second):
			t.Fatalf("the fast lane waited on the others: %v", got)
		}
	}
	mu.Lock()
	if fmt.Sprint(got["fast"]) != "[a1 a2 a3]" || len(got["slow"]) != 0 || len(got["flaky"]) != 0 {
		t.Errorf("while the others wait: %v", got)
	}
	down = false
	mu.Unlock()
	close(release)
	for range 4 {
		select {
		case <-delivered:
		case <-time.After(10 * time.Second):
			t.Fatalf("the waiting lanes did not resume: %v", got)
		}
	}
	// the acknowledgement is recorded a moment after Deliver returns
	for deadline := time.Now().Add(10 * time.Second); r.Status()[0].Pending > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if fmt.Sprint(got["slow"]) != "[s1 s2]" || fmt.Sprint(got["flaky"]) != "[f1 f2]" {
		t.Errorf("order within a lane: %v", got)
	}
	mu.Unlock()
	st := r.Status()[0]
	if st.Pending != 0 || st.Delivered != 7 || st.Retrying {
		t.Errorf("status %+v", st)
	}
	// a restart: the outbox is empty; a new packet goes once
	ctx, cancel = context.WithCancel(context.Background())
	go func() { done <- r.AttachLanes(ctx, "c", comp, ByChannel) }()
	publish(t, r, "fast", "a4")
	<-delivered
	for deadline := time.Now().Add(10 * time.Second); r.Status()[0].Pending > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(got["fast"]) != "[a1 a2 a3 a4]" {
		t.Errorf("after the restart: %v", got)
	}
}
