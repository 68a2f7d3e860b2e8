package supervise

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cyan-agent/cyan/internal/clocktest"
	"github.com/cyan-agent/cyan/journal"
)

func state(s *Supervisor, name string) State {
	for _, st := range s.Status() {
		if st.Name == name {
			return st
		}
	}
	return State{}
}

func TestAPanickingPartIsRestartedWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j, _ := journal.Open(journal.Options{})
		defer j.Close()
		s := New(Options{Journal: j})
		start := time.Now()
		var starts []time.Duration
		s.Add(Part{Name: "bridge", Run: func(ctx context.Context) error {
			starts = append(starts, time.Since(start))
			if len(starts) <= 3 {
				panic("nil map in the bridge")
			}
			<-ctx.Done()
			return nil
		}})
		s.Add(Part{Name: "steady", Run: func(ctx context.Context) error { <-ctx.Done(); return nil }})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- s.Run(ctx) }()

		time.Sleep(1500 * time.Millisecond) // between the first and second restart
		synctest.Wait()
		st := state(s, "bridge")
		if st.State != Restarting || st.LastError != "panic: nil map in the bridge" || st.Restarts != 2 || !st.Retry.Equal(start.Add(3*time.Second)) {
			t.Fatalf("while restarting: %+v", st)
		}
		if state(s, "steady").State != Running {
			t.Fatal("a failing part disturbed another")
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if want := []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second}; len(starts) != 4 || starts[1] != want[1] || starts[2] != want[2] || starts[3] != want[3] {
			t.Fatalf("started at %v, want %v (1 s, 2 s, 4 s apart)", starts, want)
		}
		if st := state(s, "bridge"); st.State != Running || st.Restarts != 3 {
			t.Fatalf("after recovering: %+v", st)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v after cancel", err)
		}
		for _, st := range s.Status() {
			if st.State != Stopped {
				t.Fatalf("after stop: %+v", st)
			}
		}
		evs, _ := j.Since(0, journal.Filter{Kinds: []journal.Kind{journal.PartState}}, 0)
		if len(evs) < 8 {
			t.Fatalf("%d part-state events", len(evs))
		}
	})
}

func TestBackoffGrowsCapsAndStartsOverAfterAHealthyRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{})
		var gaps []time.Duration
		last := time.Now()
		runs := 0
		s.Add(Part{Name: "loop", Run: func(ctx context.Context) error {
			runs++
			gaps = append(gaps, time.Since(last))
			if runs == 9 { // a healthy run: two minutes, then it fails again
				time.Sleep(2 * time.Minute)
			}
			last = time.Now()
			return errors.New("connection refused")
		}})
		ctx, cancel := context.WithCancel(context.Background())
		go s.Run(ctx)
		time.Sleep(10 * time.Minute)
		cancel()
		synctest.Wait()
		// 1 s doubling to the minute's cap; after the two-minute run (the
		// ninth) it starts over at 1 s.
		want := []time.Duration{0, 1, 2, 4, 8, 16, 32, 60, 60, 1, 2, 4}
		for i := range want {
			want[i] *= time.Second
		}
		if len(gaps) < len(want) || fmt.Sprint(gaps[:len(want)]) != fmt.Sprint(want) {
			t.Fatalf("gaps between runs %v, want %v", gaps, want)
		}
	})
}

func TestAFatalPartStopsTheDaemon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{})
		stopped := false
		s.Add(Part{Name: "api", Run: func(ctx context.Context) error { <-ctx.Done(); stopped = true; return nil }})
		s.Add(Part{Name: "qq", Run: func(ctx context.Context) error {
			time.Sleep(time.Second)
			return Fatal(errors.New("the access token is refused; set bridges.qq.token"))
		}})
		s.Add(Part{Name: "watch", Run: func(ctx context.Context) error { return Done(errors.New("inotify is not available")) }})
		err := s.Run(context.Background())
		var fe *FatalError
		if !errors.As(err, &fe) || fe.Part != "qq" || !strings.Contains(err.Error(), "part qq failed and the daemon cannot go on without it: the access token is refused; set bridges.qq.token") {
			t.Fatalf("Run = %v", err)
		}
		if !stopped {
			t.Fatal("the other parts were not stopped")
		}
		if st := state(s, "qq"); st.State != Failed {
			t.Fatalf("qq: %+v", st)
		}
		if st := state(s, "watch"); st.State != Stopped || st.LastError != "inotify is not available" || st.Restarts != 0 {
			t.Fatalf("a part that is done: %+v", st)
		}
	})
}

// TestAPartNotYetRunIsStarting: between Add and its first run a part reads
// as starting, never as stopped, so a status reader cannot take a part
// that has not run for one that ended.
func TestAPartNotYetRunIsStarting(t *testing.T) {
	s := New(Options{})
	s.Add(Part{Name: "late", Run: func(ctx context.Context) error { <-ctx.Done(); return nil }})
	if st := s.Status()[0]; st.State != Starting || st.LastError != "" {
		t.Fatalf("before Run: %+v, want starting", st)
	}
}

// TestAPartSaysWhenToRunAgain: a part's RetryAfter replaces the backoff
// for that restart; the wait is on the injected clock (nothing starts
// until the test advances it), and one Status shows the part restarting
// with its error and the time it starts again.
func TestAPartSaysWhenToRunAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
		clk := clocktest.New(start)
		s := New(Options{Clock: clk})
		var starts []time.Duration
		waits := []time.Duration{5 * time.Minute, 0, 7 * time.Second}
		s.Add(Part{Name: "qq", Run: func(ctx context.Context) error {
			starts = append(starts, clk.Now().Sub(start))
			if n := len(starts); n <= len(waits) {
				return RetryAfter(fmt.Errorf("refused %d", n), waits[n-1])
			}
			<-ctx.Done()
			return nil
		}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- s.Run(ctx) }()
		synctest.Wait()
		st := state(s, "qq")
		if st.State != Restarting || st.LastError != "refused 1" || !st.Retry.Equal(start.Add(5*time.Minute)) || st.Restarts != 1 {
			t.Fatalf("after the first run: %+v", st)
		}
		clk.Advance(5*time.Minute - time.Second)
		synctest.Wait()
		if len(starts) != 1 {
			t.Fatalf("started again before the wait it asked for: %v", starts)
		}
		clk.Advance(time.Second) // the second run asks for no wait: the third follows at once
		synctest.Wait()
		if st := state(s, "qq"); len(starts) != 3 || st.LastError != "refused 3" || !st.Retry.Equal(start.Add(5*time.Minute+7*time.Second)) {
			t.Fatalf("runs at %v, state %+v", starts, st)
		}
		clk.Advance(7 * time.Second)
		synctest.Wait()
		if want := []time.Duration{0, 5 * time.Minute, 5 * time.Minute, 5*time.Minute + 7*time.Second}; fmt.Sprint(starts) != fmt.Sprint(want) {
			t.Fatalf("runs at %v, want %v", starts, want)
		}
		if st := state(s, "qq"); st.State != Running || st.Restarts != 3 || !st.Retry.IsZero() {
			t.Fatalf("running again: %+v", st)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if RetryAfter(nil, time.Second) != nil {
			t.Error("RetryAfter(nil) is an error")
		}
	})
}

// TestAHealthyPartStartsTheBackoffOver: a part that says it is Healthy
// during a run has its last error cleared at once, and its next failure,
// however soon, waits the backoff's first step again.
func TestAHealthyPartStartsTheBackoffOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
		clk := clocktest.New(start)
		s := New(Options{Clock: clk})
		var starts []time.Duration
		healthy, fail := make(chan struct{}), make(chan struct{})
		s.Add(Part{Name: "qq", Run: func(ctx context.Context) error {
			starts = append(starts, clk.Now().Sub(start))
			if len(starts) == 4 {
				<-healthy
				Healthy(ctx)
				<-fail
			}
			return errors.New("connection lost")
		}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- s.Run(ctx) }()
		for range 3 { // 1 s, 2 s, 4 s
			synctest.Wait()
			clk.Advance(state(s, "qq").Retry.Sub(clk.Now()))
		}
		synctest.Wait()
		if st := state(s, "qq"); st.State != Running || st.LastError != "connection lost" {
			t.Fatalf("the fourth run, before it is healthy: %+v", st)
		}
		healthy <- struct{}{}
		synctest.Wait()
		if st := state(s, "qq"); st.State != Running || st.LastError != "" {
			t.Fatalf("a healthy run still shows its last error: %+v", st)
		}
		fail <- struct{}{}
		synctest.Wait()
		if st := state(s, "qq"); !st.Retry.Equal(clk.Now().Add(time.Second)) {
			t.Fatalf("after a healthy run the wait is %s, want 1 s", st.Retry.Sub(clk.Now()))
		}
		if want := []time.Duration{0, 1 * time.Second, 3 * time.Second, 7 * time.Second}; fmt.Sprint(starts) != fmt.Sprint(want) {
			t.Fatalf("runs at %v, want %v", starts, want)
		}
		Healthy(context.Background()) // outside a part: nothing
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
