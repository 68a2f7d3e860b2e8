package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
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

// runBounded runs the actors as a group (runGroup). Once stopping begins —
// ctx ends or a part returns — the others get until partsLimit; a part
// still running then is left behind (the process is about to exit), named
// in the log and in the error. It returns the group's first error (or the
// one naming the parts left behind) and when stopping began.
func runBounded(ctx context.Context, actors []actor, partsLimit time.Duration, log *slog.Logger, onExit func(string, error)) (time.Time, error) {
	var (
		mu       sync.Mutex
		running  = map[string]bool{}
		once     sync.Once
		stopping = make(chan struct{})
	)
	begin := func() { once.Do(func() { close(stopping) }) }
	wrapped := make([]actor, len(actors))
	for i, a := range actors {
		running[a.name] = true
		wrapped[i] = actor{name: a.name, run: func(ctx context.Context) error {
			defer func() {
				mu.Lock()
				delete(running, a.name)
				mu.Unlock()
				begin()
			}()
			return a.run(ctx)
		}}
	}
	stop := context.AfterFunc(ctx, begin)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- runGroup(ctx, wrapped, onExit) }()
	select {
	case err := <-done:
		return time.Now(), err
	case <-stopping:
	}
	began := time.Now()
	timer := time.NewTimer(partsLimit)
	defer timer.Stop()
	select {
	case err := <-done:
		return began, err
	case <-timer.C:
	}
	mu.Lock()
	var left []string
	for name := range running {
		left = append(left, name)
	}
	mu.Unlock()
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
