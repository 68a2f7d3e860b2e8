package daemon

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestRunBoundedLeavesAStuckPartBehind: once the stop begins, parts that do
// not return are named and left behind at the bound.
func TestRunBoundedLeavesAStuckPartBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var logged strings.Builder
		ctx, cancel := context.WithCancel(t.Context())
		run := func(ctx context.Context) error {
			<-ctx.Done()
			<-release // a part that does not stop
			return nil
		}
		done := make(chan struct{})
		var (
			began time.Time
			err   error
		)
		go func() {
			defer close(done)
			began, err = runBounded(ctx, run, func() []string { return []string{"stuck", "also-stuck"} }, 7*time.Second,
				slog.New(slog.NewTextHandler(&logged, nil)))
		}()
		time.Sleep(time.Minute) // runs for a while (fake time)
		stopAt := time.Now()
		cancel()
		<-done
		if took := time.Since(stopAt); took != 7*time.Second || !began.Equal(stopAt) {
			t.Fatalf("stopped %s after the cancel (began %s after)", took, began.Sub(stopAt))
		}
		if err == nil || !strings.Contains(err.Error(), "also-stuck, stuck did not stop within 7s") {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(logged.String(), "parts=also-stuck,stuck") {
			t.Fatalf("log: %s", logged.String())
		}
		close(release)
	})
}

// TestRunBoundedReturnsWhatRunReturns: a run that ends by itself (a fatal
// part) ends it, with its error.
func TestRunBoundedReturnsWhatRunReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fatal := errors.New("the HTTP server stopped")
		_, err := runBounded(t.Context(), func(context.Context) error { time.Sleep(time.Second); return fatal },
			func() []string { return nil }, time.Second, slog.New(slog.DiscardHandler))
		if err != fatal {
			t.Fatalf("err = %v", err)
		}
	})
}
