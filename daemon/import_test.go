package daemon

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/store"
)

// titleWriter titles every topic with its first line.
type titleWriter struct{}

func (titleWriter) TitleTopic(_ context.Context, in events.TopicInput) (events.TopicTitle, error) {
	return events.TopicTitle{Title: in.Lines[0].Text, Importance: 0.5}, nil
}
func (titleWriter) Summarize(context.Context, events.RollupInput) (events.Summary, error) {
	return events.Summary{Title: "a day", Importance: 0.2}, nil
}
func (titleWriter) Extract(context.Context, events.ExtractInput) (events.Extraction, error) {
	return events.Extraction{}, nil
}

// TestImportBuildsOnlyWhenTheLastBatchIsIn: batches note their channels
// and times on the journal; the final one has the actor build each
// channel over the union of its batches' spans.
func TestImportBuildsOnlyWhenTheLastBatchIsIn(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	log, err := events.New(events.Options{Store: st, Config: config.Defaults().Events, Writer: titleWriter{}, Escape: notation.Escape,
		Location: time.UTC, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 5, 1, 9, 0, 0, 0, time.UTC)
	batch := func(ch string, at time.Time, text string, final bool) {
		m := &store.Message{Channel: ch, Role: store.RoleUser, User: "amy", Text: text, Time: at}
		if _, _, _, err := st.ImportBatch([]*store.Message{m}, store.Batch{Final: final}); err != nil {
			t.Fatal(err)
		}
	}
	b := newImportBuilds(st.Journal(), log, slog.New(slog.DiscardHandler))

	// Before the final batch, nothing is ready.
	batch("home", t0, "the lake trip", false)
	batch("home", t0.AddDate(0, 0, 3), "the piano lesson", false)
	evs, err := b.sub.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if ready := b.take(evs); len(ready) != 0 || len(evs) != 2 {
		t.Fatalf("ready before the last batch: %v (of %d events)", ready, len(evs))
	}
	batch("group", t0.AddDate(0, 0, 1), "hello all", true)

	built := make(chan string, 4)
	b.builtFn = func(ch string, rep *events.BuildReport) { built <- ch }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.run(ctx) }()
	got := map[string]bool{<-built: true, <-built: true}
	if !got["home"] || !got["group"] {
		t.Fatalf("built %v", got)
	}
	evs2, err := log.Events(events.Filter{Channel: "home", Level: events.LevelEvent}, now)
	if err != nil || len(evs2) != 2 || evs2[0].Title != "the lake trip" || evs2[1].Title != "the piano lesson" {
		t.Fatalf("home's records: %+v %v", evs2, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
