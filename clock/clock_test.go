package clock

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestSleepWaitsOnTheClockOrTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := Sleep(context.Background(), Real{}, time.Hour); err != nil || time.Since(start) != time.Hour {
			t.Fatalf("a full sleep: %v after %s", err, time.Since(start))
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(time.Minute); cancel() }()
		if err := Sleep(ctx, Real{}, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) != time.Hour+time.Minute {
			t.Fatalf("a sleep the context ended: %v", err)
		}
		if err := Sleep(ctx, Real{}, 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("no wait on an ended context: %v", err)
		}
		if err := Sleep(context.Background(), Real{}, -time.Second); err != nil {
			t.Fatalf("no wait: %v", err)
		}
	})
}
