package daemon

import (
	"context"
	"sync"
)

// actor is one long-running part. run blocks until ctx ends (returning nil)
// or the part fails.
type actor struct {
	name string
	run  func(ctx context.Context) error
}

// runGroup runs actors until ctx ends or the first one returns; then it
// cancels the rest, waits for them, and returns the first error.
// Cancellation is not an error: it is the way to stop.
func runGroup(ctx context.Context, actors []actor, onExit func(name string, err error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for _, a := range actors {
		wg.Go(func() {
			err := a.run(ctx)
			if onExit != nil {
				onExit(a.name, err)
			}
			once.Do(func() { first = err })
			cancel()
		})
	}
	wg.Wait()
	return first
}
