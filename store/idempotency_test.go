package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/journal"
)

func TestImportBatchReplaysTheFirstAnswer(t *testing.T) {
	s, _ := Open(Options{InMemory: true})
	defer s.Close()
	batch := func() []*Message {
		return []*Message{{Channel: "c", Text: "one", Time: t0}, {Channel: "c", Text: "two", Time: t0.Add(time.Second)}}
	}
	if _, err := s.Import(batch()[:1]); err != nil { // one is already there
		t.Fatal(err)
	}
	// Racing retries of one batch: one imports, the others replay its answer.
	var wg sync.WaitGroup
	answers := make([]ImportAnswer, 8)
	replays := make([]bool, 8)
	for i := range answers {
		wg.Go(func() {
			a, _, r, err := s.ImportBatch(batch(), Batch{Key: "batch-1"})
			if err != nil {
				t.Error(err)
			}
			answers[i], replays[i] = a, r
		})
	}
	wg.Wait()
	fresh := 0
	for i, a := range answers {
		if a != (ImportAnswer{Added: 1, Skipped: 1}) {
			t.Fatalf("answer %d = %+v, want the first one", i, a)
		}
		if !replays[i] {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d calls imported; want 1", fresh)
	}
	if got, _ := s.Recent("c", Window{Limit: 10}); len(got) != 2 {
		t.Fatalf("stored %d messages", len(got))
	}
	if a, _, r, err := s.ImportBatch(batch(), Batch{}); err != nil || r || a != (ImportAnswer{Skipped: 2}) {
		t.Fatalf("no key: %+v replayed %v, %v; want both skipped, not replayed", a, r, err)
	}
	if _, _, _, err := s.ImportBatch(batch(), Batch{Key: "a\nb"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("control character in key: %v", err)
	}
}

func TestAppendRefusesAHeldExternalID(t *testing.T) {
	s, _ := Open(Options{InMemory: true})
	defer s.Close()
	first := &Message{Channel: "c", Role: RoleUser, Text: "hi", ExternalID: "k1"}
	if err := s.Append(t0, first); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stored := make(chan string, 10)
	for range 10 {
		wg.Go(func() {
			m := &Message{Channel: "c2", Role: RoleUser, Text: "race", ExternalID: "k1"}
			err := s.Append(t0, m)
			var de *DuplicateError
			switch {
			case err == nil:
				stored <- m.ID
			case !errors.As(err, &de) || !errors.Is(err, ErrDuplicate) || de.ID == "":
				t.Errorf("Append of a held key = %v", err)
			}
		})
	}
	wg.Wait()
	close(stored)
	if n := len(stored); n != 1 {
		t.Fatalf("%d messages stored with one key in c2", n)
	}
	err := s.Append(t0, &Message{Channel: "c", Role: RoleUser, Text: "again", ExternalID: "k1"})
	var de *DuplicateError
	if !errors.As(err, &de) || de.ID != first.ID {
		t.Fatalf("Append again = %v", err)
	}
}

func TestRepliesTo(t *testing.T) {
	s, _ := Open(Options{InMemory: true})
	defer s.Close()
	in := &Message{Channel: "c", Role: RoleUser, Text: "q"}
	if err := s.Append(t0, in); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.Append(t0, &Message{Channel: "c", Role: RoleAssistant, Text: fmt.Sprint("a", i), ReplyTo: in.ID, Part: i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append(t0, &Message{Channel: "c", Role: RoleUser, Text: "next"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.RepliesTo("c", in.ID, 100)
	if err != nil || fmt.Sprint(texts(got)) != "[a0 a1 a2]" {
		t.Fatalf("RepliesTo = %v, %v", texts(got), err)
	}
}

// TestImportBatchTellsTheJournal: each batch posts MessagesImported with
// the channels and times it covers (messages already stored too), the last
// says it is final, and a replayed batch posts nothing.
func TestImportBatchTellsTheJournal(t *testing.T) {
	s, _ := Open(Options{InMemory: true})
	defer s.Close()
	sub := s.Journal().Subscribe(s.Journal().Last(), journal.Filter{Kinds: []journal.Kind{journal.MessagesImported}})
	one := []*Message{{Channel: "a", Text: "one", Time: t0.Add(time.Hour)}, {Channel: "b", Text: "two", Time: t0}, {Channel: "a", Text: "three", Time: t0}}
	if _, _, _, err := s.ImportBatch(one, Batch{Key: "k1"}); err != nil {
		t.Fatal(err)
	}
	if _, _, r, err := s.ImportBatch(one, Batch{Key: "k1", Final: true}); err != nil || !r {
		t.Fatalf("the retry: replayed %v, %v", r, err)
	}
	again := []*Message{{Channel: "a", Text: "one", Time: t0.Add(time.Hour)}}
	if _, _, _, err := s.ImportBatch(again, Batch{Final: true}); err != nil {
		t.Fatal(err)
	}
	s.Journal().Close()
	var got []journal.Imported
	for {
		evs, err := sub.Next(context.Background())
		if errors.Is(err, journal.ErrClosed) {
			break
		}
		for _, e := range evs {
			var im journal.Imported
			if err := e.Decode(&im); err != nil {
				t.Fatal(err)
			}
			got = append(got, im)
		}
	}
	want := []journal.Imported{
		{Added: 3, Spans: []journal.Span{{Channel: "a", From: t0, To: t0.Add(time.Hour)}, {Channel: "b", From: t0, To: t0}}},
		{Skipped: 1, Spans: []journal.Span{{Channel: "a", From: t0.Add(time.Hour), To: t0.Add(time.Hour)}}, Final: true},
	}
	if len(got) != len(want) {
		t.Fatalf("the journal told %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i].Added != want[i].Added || got[i].Skipped != want[i].Skipped || got[i].Final != want[i].Final || len(got[i].Spans) != len(want[i].Spans) {
			t.Fatalf("batch %d: %+v; want %+v", i, got[i], want[i])
		}
		for j, sp := range want[i].Spans {
			if g := got[i].Spans[j]; g.Channel != sp.Channel || !g.From.Equal(sp.From) || !g.To.Equal(sp.To) {
				t.Fatalf("batch %d span %d: %+v; want %+v", i, j, g, sp)
			}
		}
	}
}
