package store

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentAppendsShareCommitsAndKeepOrder: Appends from many
// goroutines at once are all stored, each Append's messages together and
// in order, each writer's Appends in the order it made them, the arrival
// log without holes — also after the store is opened again.
func TestConcurrentAppendsShareCommitsAndKeepOrder(t *testing.T) {
	dir := t.TempDir()
	s := openDir(t, dir)
	const writers, appends = 16, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range appends {
				a := &Message{Channel: fmt.Sprint("c", w), Role: RoleUser, Text: fmt.Sprintf("%d/%d/a", w, i)}
				b := &Message{Channel: fmt.Sprint("c", w), Role: RoleAssistant, Text: fmt.Sprintf("%d/%d/b", w, i)}
				if err := s.Append(time.Now(), a, b); err != nil {
					t.Error(err)
					return
				}
				if a.ID == "" || b.ID == "" {
					t.Error("an id is missing")
				}
			}
		}()
	}
	wg.Wait()
	check := func(s *Store) {
		t.Helper()
		var all []*Message
		for cursor := uint64(0); ; {
			batch, next, err := s.Since(cursor, 100)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, batch...)
			if len(batch) == 0 {
				break
			}
			cursor = next
		}
		if len(all) != writers*appends*2 {
			t.Fatalf("%d messages in the arrival log, want %d", len(all), writers*appends*2)
		}
		nextOf := map[int]int{}
		for k := 0; k < len(all); k += 2 {
			var w, i int
			var part string
			fmt.Sscanf(all[k].Text, "%d/%d/%s", &w, &i, &part)
			if part != "a" || all[k+1].Text != fmt.Sprintf("%d/%d/b", w, i) {
				t.Fatalf("at %d: %q then %q: an Append's messages are not together", k, all[k].Text, all[k+1].Text)
			}
			if i != nextOf[w] {
				t.Fatalf("writer %d: append %d came where %d was due", w, i, nextOf[w])
			}
			nextOf[w]++
		}
		if s.LastArrival() != uint64(writers*appends*2) {
			t.Errorf("last arrival %d", s.LastArrival())
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openDir(t, dir)
	defer s.Close()
	check(s)
}
