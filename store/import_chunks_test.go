package store

import (
	"fmt"
	"testing"
	"time"
)

// An import larger than one transaction is written in several, committed
// one while the next is built: every message lands once, in order, with
// consecutive arrivals; duplicates inside the batch are skipped across
// transactions; the idempotency answer counts them all; the channel keeps
// the creation time of its first message.
func TestImportChunksPipelined(t *testing.T) {
	s, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var msgs []*Message
	for i := range 12000 {
		msgs = append(msgs, &Message{Channel: fmt.Sprintf("c%d", i%10000%3), User: "u", Text: fmt.Sprintf("message %d, long enough that a few thousand fill one transaction", i),
			Time: t0.Add(time.Duration(i) * time.Second), ExternalID: fmt.Sprint(i % 10000)}) // the last 2000 repeat earlier ones
	}
	ans, added, replayed, err := s.ImportBatch(msgs, Batch{Key: "big", Final: true})
	if err != nil || replayed || len(added) != 10000 || ans.Added != 10000 || ans.Skipped != 2000 {
		t.Fatalf("ImportOnce = %+v, %d added, replayed %v, %v", ans, len(added), replayed, err)
	}
	got, cur, err := s.Since(0, 100000)
	if err != nil || len(got) != 10000 || cur != 10000 {
		t.Fatalf("Since = %d, %d, %v", len(got), cur, err)
	}
	for i, m := range got {
		if m.ExternalID != fmt.Sprint(i) {
			t.Fatalf("arrival %d is external id %s", i+1, m.ExternalID)
		}
	}
	ans2, _, replayed, err := s.ImportBatch(msgs, Batch{Key: "big", Final: true})
	if err != nil || !replayed || ans2 != ans {
		t.Fatalf("second ImportOnce = %+v, replayed %v, %v", ans2, replayed, err)
	}
	chans, err := s.Channels()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chans {
		if want := t0.Add(time.Duration(c.Name[1]-'0') * time.Second); !c.Created.Equal(want) {
			t.Errorf("channel %s created %v, want %v", c.Name, c.Created, want)
		}
	}
	if more, err := s.Import(msgs); err != nil || len(more) != 0 {
		t.Fatalf("Import again = %d, %v", len(more), err)
	}
}
