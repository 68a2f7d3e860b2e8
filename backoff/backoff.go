package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy is a retry schedule: the wait before retry n (0-based) is
// Base·2ⁿ, at most Max. With Jitter the wait is drawn from its upper half,
// so many clients retrying at once spread out.
type Policy struct {
	Base   time.Duration
	Max    time.Duration
	Jitter bool
}

// Delay is the wait before retry n (n < 0 counts as 0).
func (p Policy) Delay(n int) time.Duration {
	if p.Base <= 0 {
		return 0
	}
	d := p.Max
	if n < 0 {
		n = 0
	}
	if n < 62 && (p.Max <= 0 || p.Base<<n < p.Max) && p.Base<<n > 0 {
		d = p.Base << n
	}
	if p.Max > 0 {
		d = min(d, p.Max)
	}
	if p.Jitter && d > 1 {
		half := d / 2
		d = half + rand.N(d-half+1)
	}
	return d
}

// Sleep waits d, or until ctx ends; it reports whether the wait was
// complete.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
