package backoff

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestDelay(t *testing.T) {
	p := Policy{Base: time.Second, Max: time.Minute}
	for _, tt := range []struct {
		n    int
		want time.Duration
	}{{-1, time.Second}, {0, time.Second}, {1, 2 * time.Second}, {5, 32 * time.Second}, {6, time.Minute}, {100, time.Minute}} {
		if got := p.Delay(tt.n); got != tt.want {
			t.Errorf("Delay(%d) = %s, want %s", tt.n, got, tt.want)
		}
	}
	j := Policy{Base: 500 * time.Millisecond, Max: 30 * time.Second, Jitter: true}
	for n := range 20 {
		full := Policy{Base: j.Base, Max: j.Max}.Delay(n)
		if d := j.Delay(n); d < full/2 || d > full {
			t.Errorf("jittered Delay(%d) = %s, outside [%s, %s]", n, d, full/2, full)
		}
	}
	if (Policy{}).Delay(3) != 0 {
		t.Error("a zero policy waits")
	}
}

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !Sleep(context.Background(), time.Hour) || time.Since(start) != time.Hour {
			t.Fatal("a full sleep")
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(time.Minute); cancel() }()
		if Sleep(ctx, time.Hour) {
			t.Fatal("the context ended the sleep")
		}
	})
}
