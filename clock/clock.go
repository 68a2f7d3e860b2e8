// Package clock is the one time source of the daemon's schedules and
// waits: the observers, the bridges, the supervisor and the voice take a
// Clock, the daemon hands them Real, and tests hand them
// internal/clocktest's settable clock, so no test waits on the wall.
//
// It imports nothing of cyan's.
package clock

import (
	"context"
	"time"
)

// Clock is Now and After, as package time has them.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// Real is the wall clock.
type Real struct{}

// Now implements Clock.
func (Real) Now() time.Time { return time.Now() }

// After implements Clock.
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Sleep waits d on c, or until ctx ends: it returns nil after the whole
// wait, else ctx's error. The one wait of the parts that take a Clock
// (the supervisor's restarts, the bridges' pauses and retries).
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-c.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
