package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestImportOnceReplaysTheFirstAnswer(t *testing.T) {
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
			a, _, r, err := s.ImportOnce("batch-1", batch())
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
	if _, _, _, err := s.ImportOnce("", batch()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty key: %v", err)
	}
	if _, _, _, err := s.ImportOnce("a\nb", batch()); !errors.Is(err, ErrInvalid) {
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
