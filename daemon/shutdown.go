package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// The shares of shutdown_timeout: the HTTP server waits for the requests
// in flight (the turns answering) for httpGraceShare of it, then cancels
// them and waits httpHardShare more; every part has stopped by partsShare,
// and the store closes in what is left, short of closeMargin (so the
// process has exited when the bound is up).
const (
	httpGraceShare = 0.4
	httpHardShare  = 0.1
	partsShare     = 0.75
	closeMargin    = 250 * time.Millisecond
)

func share(limit time.Duration, f float64) time.Duration {
	return time.Duration(float64(limit) * f)
}

// runBounded runs the parts (run: the supervisor's Run). Once ctx ends
// they get until partsLimit to stop; a part still running then (running
// names them) is left behind — the process is about to exit — named in
// the log and in the error. It returns when stopping began and run's error
// (or the one naming the parts left behind).
func runBounded(ctx context.Context, run func(context.Context) error, running func() []string, partsLimit time.Duration, log *slog.Logger) (time.Time, error) {
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	select {
	case err := <-done:
		return time.Now(), err
	case <-ctx.Done():
	}
	began := time.Now()
	timer := time.NewTimer(partsLimit)
	defer timer.Stop()
	select {
	case err := <-done:
		return began, err
	case <-timer.C:
	}
	left := running()
	slices.Sort(left)
	log.Error("parts did not stop in time; exiting without waiting for them", "parts", strings.Join(left, ","), "waited", partsLimit)
	return began, fmt.Errorf("daemon: %s did not stop within %s of the shutdown", strings.Join(left, ", "), partsLimit)
}

// closeStore closes the store by deadline. When it cannot close cleanly
// (the data dir gone, the disk full, a disk too slow), the error says what
// was not flushed and where it stays; the daemon then exits non-zero.
func (d *Daemon) closeStore(deadline time.Time) error {
	limit := max(time.Until(deadline), 100*time.Millisecond)
	if err := d.store.CloseWithin(limit); err != nil {
		d.log.Error("the store did not close cleanly", "err", err)
		return err
	}
	return nil
}
