package daemon

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestRunBoundedLeavesAStuckPartBehind: once stopping begins, a part that
// does not return is named and left behind at the bound, whatever it does.
func TestRunBoundedLeavesAStuckPartBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var logged strings.Builder
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		var (
			began time.Time
			err   error
		)
		go func() {
			defer close(done)
			began, err = runBounded(ctx, []actor{
				{name: "polite", run: func(ctx context.Context) error { <-ctx.Done(); return nil }},
				{name: "stuck", run: func(context.Context) error { <-release; return nil }},
			}, 7*time.Second, slog.New(slog.NewTextHandler(&logged, nil)), nil)
		}()
		time.Sleep(time.Minute) // runs for a while (fake time)
		stopAt := time.Now()
		cancel()
		<-done
		if took := time.Since(stopAt); took != 7*time.Second || !began.Equal(stopAt) {
			t.Fatalf("stopped %s after the cancel (began %s after)", took, began.Sub(stopAt))
		}
		if err == nil || !strings.Contains(err.Error(), "stuck did not stop within 7s") || strings.Contains(err.Error(), "polite") {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(logged.String(), "parts=stuck") {
			t.Fatalf("log: %s", logged.String())
		}
		close(release)
	})
}

// TestRunBoundedStopsOnAFailingPart: a part that fails begins the stop.
func TestRunBoundedStopsOnAFailingPart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		began, err := runBounded(t.Context(), []actor{
			{name: "waits", run: func(ctx context.Context) error { <-ctx.Done(); return nil }},
			{name: "fails", run: func(context.Context) error { time.Sleep(time.Second); return context.DeadlineExceeded }},
		}, time.Second, slog.New(slog.DiscardHandler), nil)
		if err != context.DeadlineExceeded || time.Since(began) != 0 {
			t.Fatalf("err = %v, %s after the stop began", err, time.Since(began))
		}
	})
}
