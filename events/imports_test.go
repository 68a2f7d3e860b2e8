package events

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// TestImportBuildsOnlyWhenTheLastBatchIsIn: batches note their channels
// and times; nothing is handed to the actor before the last one, which
// hands them over, and the actor builds each channel over the union of
// its batches' spans.
func TestImportBuildsOnlyWhenTheLastBatchIsIn(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	f := newFixture(t, now, testConfig())
	t0 := time.Date(2025, 5, 1, 9, 0, 0, 0, time.UTC)
	b := f.log.NewImports(slog.New(slog.DiscardHandler))
	built := make(chan string, 4)
	b.built = func(ch string, rep *BuildReport) { built <- ch }
	batch := func(ch string, at time.Time, text string) {
		m := &store.Message{Channel: ch, Role: store.RoleUser, User: "amy", Text: text, Time: at}
		if _, err := f.st.Import([]*store.Message{m}); err != nil {
			t.Fatal(err)
		}
		b.Note(ch, at)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()

	batch("home", t0, "the lake trip")
	batch("home", t0.AddDate(0, 0, 3), "the piano lesson")
	b.mu.Lock()
	ready, kicked := len(b.ready), len(b.kick)
	b.mu.Unlock()
	if ready != 0 || kicked != 0 {
		t.Fatalf("before the last batch: %d channels ready, %d kicks", ready, kicked)
	}
	batch("group", t0.AddDate(0, 0, 1), "hello all")
	b.Finish(1)
	got := map[string]bool{<-built: true, <-built: true}
	if !got["home"] || !got["group"] {
		t.Fatalf("built %v", got)
	}
	evs, err := f.log.Events(Filter{Channel: "home", Level: LevelEvent}, now)
	if err != nil || len(evs) != 2 || evs[0].Title != "amy: the lake trip" || evs[1].Title != "amy: the piano lesson" {
		t.Fatalf("home's records: %+v %v", evs, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
