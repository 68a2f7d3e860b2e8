package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/journal"
)

func TestSinceReadsEveryMessageInArrivalOrder(t *testing.T) {
	dir := t.TempDir()
	s := openDir(t, dir)
	if err := s.Append(t0, &Message{Channel: "a", Role: RoleUser, Text: "live 1"}, &Message{Channel: "b", Role: RoleAssistant, Text: "live 2"}); err != nil {
		t.Fatal(err)
	}
	// Each live message is on the journal, as it came in or went out.
	evs, err := s.Journal().Since(0, journal.Filter{}, 0)
	if err != nil || len(evs) != 2 || evs[0].Kind != journal.MessageIn || evs[1].Kind != journal.MessageOut || evs[1].Channel != "b" {
		t.Fatalf("journal after Append: %+v %v", evs, err)
	}
	// History older than the live messages arrives after them.
	hist := []*Message{
		{Channel: "a", Text: "old 1", Time: t0.Add(-48 * time.Hour), ExternalID: "x1"},
		{Channel: "a", Text: "old 2", Time: t0.Add(-47 * time.Hour), ExternalID: "x2"},
	}
	added, err := s.Import(hist)
	if err != nil || len(added) != 2 {
		t.Fatalf("Import = %d, %v", len(added), err)
	}
	if evs, _ := s.Journal().Since(2, journal.Filter{}, 0); len(evs) != 1 || evs[0].Kind != journal.MessagesImported {
		t.Fatalf("journal after Import: %+v", evs)
	}
	got, cur, err := s.Since(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"live 1", "live 2", "old 1", "old 2"}; fmt.Sprint(texts(got)) != fmt.Sprint(want) {
		t.Fatalf("Since(0) = %v, want %v", texts(got), want)
	}
	if cur != 4 || s.LastArrival() != 4 {
		t.Fatalf("cursor = %d, last = %d, want 4", cur, s.LastArrival())
	}
	part, cur2, _ := s.Since(2, 1)
	if len(part) != 1 || part[0].Text != "old 1" || cur2 != 3 {
		t.Fatalf("Since(2, 1) = %v, %d", texts(part), cur2)
	}
	// Imported history reads in time order in its channel.
	all, _ := s.Recent("a", Window{Limit: 10})
	if want := []string{"old 1", "old 2", "live 1"}; fmt.Sprint(texts(all)) != fmt.Sprint(want) {
		t.Fatalf("Recent(a) = %v, want %v", texts(all), want)
	}
	// The cursor survives a restart.
	s.Close()
	s = openDir(t, dir)
	defer s.Close()
	if s.LastArrival() != 4 {
		t.Fatalf("LastArrival after reopen = %d", s.LastArrival())
	}
}

func TestScanReadsASnapshot(t *testing.T) {
	s, _ := Open(Options{InMemory: true})
	defer s.Close()
	for i := range 25 {
		if err := s.Append(t0, &Message{Channel: fmt.Sprint("c", i%3), Text: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	n, batches := 0, 0
	cur, err := s.ScanAll(10, func(ms []*Message) error {
		n += len(ms)
		batches++
		if batches == 1 { // a write during the scan is not in it, but after the cursor
			return s.Append(t0, &Message{Channel: "c0", Text: "late"})
		}
		return nil
	})
	if err != nil || n != 25 || batches != 3 || cur != 25 {
		t.Fatalf("Scan: %d messages in %d batches, cursor %d, %v", n, batches, cur, err)
	}
	late, _, _ := s.Since(cur, 10)
	if len(late) != 1 || late[0].Text != "late" {
		t.Fatalf("after the scan's cursor: %v", texts(late))
	}
}

func TestImportIsIdempotent(t *testing.T) {
	s, _ := Open(Options{InMemory: true})
	defer s.Close()
	mk := func() []*Message {
		return []*Message{
			{Channel: "c", User: "ann", Text: "hello", Time: t0},
			{Channel: "c", User: "bob", Text: "hi", Time: t0.Add(time.Second), ExternalID: "D1:2"},
			{Channel: "c", User: "bob", Text: "dup in one batch", Time: t0.Add(time.Second), ExternalID: "D1:2"},
		}
	}
	a, err := s.Import(mk())
	if err != nil || len(a) != 2 {
		t.Fatalf("first import added %d, %v", len(a), err)
	}
	b, err := s.Import(mk())
	if err != nil || len(b) != 0 {
		t.Fatalf("second import added %d, %v", len(b), err)
	}
	id, err := s.LookupExternal("c", "D1:2")
	if err != nil || id != a[1].ID {
		t.Fatalf("LookupExternal = %q, %v", id, err)
	}
	if _, err := s.Import([]*Message{{Channel: "c", Text: "no time"}}); err == nil {
		t.Fatal("a message without time was imported")
	}
	if _, err := s.Import([]*Message{{Channel: "c", Text: "x", Time: t0, Role: "robot"}}); err == nil {
		t.Fatal("a bad role was imported")
	}
}

func TestAround(t *testing.T) {
	s, _ := Open(Options{InMemory: true})
	defer s.Close()
	var ms []*Message
	for i := range 6 {
		m := &Message{Channel: "c", Text: fmt.Sprint(i)}
		ms = append(ms, m)
		if err := s.Append(t0, m); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(t0, &Message{Channel: "other", Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name          string
		at            int
		before, after int
		want          string
	}{
		{"middle", 2, 1, 2, "[1 2 3 4]"},
		{"first", 0, 3, 1, "[0 1]"},
		{"last", 5, 2, 3, "[3 4 5]"},
		{"alone", 3, 0, 0, "[3]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Around("c", ms[tc.at].ID, tc.before, tc.after)
			if err != nil || fmt.Sprint(texts(got)) != tc.want {
				t.Fatalf("Around = %v, %v; want %s", texts(got), err, tc.want)
			}
		})
	}
}

// TestImportSplitsBatchesTooBigForOneTransaction: an import with more
// writes than Badger takes in one transaction is split until each part
// fits, and stores every message once. The memtable is 1 MiB here, not the
// store's 8 MiB, so that 1,200 messages of three writes each (not 10,000)
// are over the limit; the test checks they are, more than once over.
func TestImportSplitsBatchesTooBigForOneTransaction(t *testing.T) {
	s, err := Open(Options{InMemory: true, tune: func(o badger.Options) badger.Options { return o.WithMemTableSize(1 << 20).WithValueThreshold(64 << 10) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 1200
	// Each imported message writes three keys (message, id, external
	// id) and its share of the transaction's arrival batch.
	if limit := s.db.MaxBatchCount(); 3*n < 2*limit {
		t.Fatalf("%d messages (three writes each) are not twice the %d writes of a transaction: nothing would be split", n, limit)
	}
	var msgs []*Message
	for i := range n {
		msgs = append(msgs, &Message{Channel: "big", User: "u", Text: fmt.Sprintf("message %d with some words to make it longer than a few bytes", i),
			Time: t0.Add(time.Duration(i) * time.Second), ExternalID: fmt.Sprint(i)})
	}
	added, err := s.Import(msgs)
	if err != nil || len(added) != len(msgs) {
		t.Fatalf("Import = %d, %v", len(added), err)
	}
	got, cur, err := s.Since(0, 100000)
	if err != nil || len(got) != len(msgs) || cur != uint64(len(msgs)) {
		t.Fatalf("Since = %d, %d, %v", len(got), cur, err)
	}
	again, err := s.Import(msgs)
	if err != nil || len(again) != 0 {
		t.Fatalf("second Import = %d, %v", len(again), err)
	}
}
