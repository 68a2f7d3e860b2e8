package events

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// TestImportBuildsOnlyWhenTheLastBatchIsIn: batches tell the journal their
// channels and times; nothing is ready before the last one, and then the
// actor builds each channel over the union of its batches' spans.
func TestImportBuildsOnlyWhenTheLastBatchIsIn(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	f := newFixture(t, now, testConfig())
	t0 := time.Date(2025, 5, 1, 9, 0, 0, 0, time.UTC)
	b := f.log.NewImports(slog.New(slog.DiscardHandler))
	batch := func(ch string, at time.Time, text string, final bool) {
		m := &store.Message{Channel: ch, Role: store.RoleUser, User: "amy", Text: text, Time: at}
		if _, _, _, err := f.st.ImportBatch([]*store.Message{m}, store.Batch{Final: final}); err != nil {
			t.Fatal(err)
		}
	}

	batch("home", t0, "the lake trip", false)
	batch("home", t0.AddDate(0, 0, 3), "the piano lesson", false)
	evs, err := b.sub.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if ready := b.take(evs); len(evs) != 2 || len(ready) != 0 {
		t.Fatalf("before the last batch: %v ready (of %d events)", ready, len(evs))
	}
	batch("group", t0.AddDate(0, 0, 1), "hello all", true)

	built := make(chan string, 4)
	b.built = func(ch string, rep *BuildReport) { built <- ch }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	got := map[string]bool{<-built: true, <-built: true}
	if !got["home"] || !got["group"] {
		t.Fatalf("built %v", got)
	}
	recs, err := f.log.Events(Filter{Channel: "home", Level: LevelEvent}, now)
	if err != nil || len(recs) != 2 || recs[0].Title != "amy: the lake trip" || recs[1].Title != "amy: the piano lesson" {
		t.Fatalf("home's records: %+v %v", recs, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
