package events

import (
	"context"
	"testing"
	"time"
)

func TestRunCatchesUpAtStartAndStopsOnCancel(t *testing.T) {
	t0 := day(2026, 5, 1, 9, 0)
	f := newFixture(t, t0, testConfig())
	f.say(t, "c", "amy", "before the restart", t0)
	f.clk.Set(t0.Add(3 * 24 * time.Hour)) // the daemon starts three days later
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.log.Run(ctx) }()
	// The first pass runs at once: it closes the topic and rolls up its day.
	deadline := time.Now().Add(10 * time.Second)
	for len(f.events(t, "c", LevelDay)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("Run did not catch up at start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v on cancel; cancellation is not an error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop on cancel")
	}
}
