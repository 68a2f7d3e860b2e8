package journal

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

func openDB(t *testing.T, dir string) *badger.DB {
	t.Helper()
	opts := badger.DefaultOptions(dir).WithLogger(nil)
	if dir == "" {
		opts = opts.WithInMemory(true)
	}
	db, err := badger.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func open(t *testing.T, db *badger.DB, o Options) *Journal {
	t.Helper()
	o.DB, o.Prefix = db, "jnl\x00"
	j, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func texts(t *testing.T, evs []Event) []string {
	t.Helper()
	var out []string
	for _, e := range evs {
		if e.Kind == Gap {
			out = append(out, "gap")
			continue
		}
		var m Message
		if err := e.Decode(&m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Text)
	}
	return out
}

func say(j *Journal, channel, text string) uint64 {
	return j.Post(New(MessageOut, channel, Message{Text: text}))
}

func TestIDsGrowAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	j := open(t, db, Options{})
	say(j, "home", "one")
	j.PostTransient(New(ReplyDelta, "home", Delta{Text: "t"}))
	last := say(j, "home", "two")
	j.PostTransient(New(ReplyDelta, "home", Delta{Text: "u"}))
	seen := j.Last()
	j.Close()
	db.Close()

	db = openDB(t, dir)
	defer db.Close()
	j = open(t, db, Options{})
	id := say(j, "home", "three")
	if id <= seen || id <= last {
		t.Fatalf("id after restart %d, want > %d (the last id a reader saw)", id, seen)
	}
	evs, err := j.Since(0, Filter{Kinds: []Kind{MessageOut}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(texts(t, evs)); got != "[one two three]" {
		t.Fatalf("since 0 = %s", got)
	}
	// A reader that saw the last delta gets exactly what came after.
	evs, _ = j.Since(seen, Filter{}, 0)
	if got := fmt.Sprint(texts(t, evs)); got != "[three]" {
		t.Fatalf("since %d = %s", seen, got)
	}
}

func TestSlowSubscriberCatchesUpFromTheStore(t *testing.T) {
	j := open(t, openDB(t, ""), Options{Ring: 8})
	sub := j.Subscribe(j.Last(), Filter{Channel: "qq:group:*"})
	const n = 1000
	for i := range n {
		say(j, "qq:group:1", fmt.Sprint(i))
		say(j, "home", "not mine")
		j.PostTransient(New(ReplyDelta, "qq:group:1", Delta{Text: "live"}))
	}
	j.flush() // the writer has caught up (it does so on its own; this makes the test exact)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	gaps := 0
	for len(got) < n {
		evs, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("after %d: %v", len(got), err)
		}
		for _, e := range evs {
			switch e.Kind {
			case Gap:
				gaps++
			case MessageOut:
				got = append(got, texts(t, []Event{e})[0])
			}
		}
	}
	for i, s := range got {
		if s != fmt.Sprint(i) {
			t.Fatalf("message %d is %q: lost or out of order", i, s)
		}
	}
	if gaps != 1 {
		t.Fatalf("%d gaps; the deltas that left memory must be reported once", gaps)
	}
	// Nothing more: the next event is the next posted.
	say(j, "qq:group:2", "next")
	evs, err := sub.Next(ctx)
	if err != nil || fmt.Sprint(texts(t, evs)) != "[next]" {
		t.Fatalf("next = %v %v", evs, err)
	}
}

func TestSubscriberWithoutStoreSeesAGap(t *testing.T) {
	j, err := Open(Options{Ring: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	sub := j.Subscribe(0, Filter{})
	for i := range 10 {
		say(j, "c", fmt.Sprint(i))
	}
	evs, err := sub.Next(context.Background())
	if err != nil || fmt.Sprint(texts(t, evs)) != "[gap 6 7 8 9]" {
		t.Fatalf("got %v %v", texts(t, evs), err)
	}
}

func TestRetainBoundsTheStore(t *testing.T) {
	j := open(t, openDB(t, ""), Options{Ring: 4, Retain: 50})
	for i := range 200 {
		say(j, "c", fmt.Sprint(i))
		if i%10 == 0 {
			j.flush() // the writer's batches, made deterministic
		}
	}
	j.flush()
	evs, err := j.Since(0, Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].Kind != Gap || len(evs) > 1+50+50/8+10 || texts(t, evs)[len(evs)-1] != "199" {
		t.Fatalf("since 0 after trimming: %d events, first %s", len(evs), evs[0].Kind)
	}
}

func TestConcurrentPostersAndReaders(t *testing.T) {
	j := open(t, openDB(t, ""), Options{Ring: 16})
	const writers, each = 4, 200
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var readers sync.WaitGroup
	for r := range 3 {
		sub := j.Subscribe(0, Filter{Kinds: []Kind{MessageOut}})
		readers.Go(func() {
			var prev uint64
			seen := 0
			for seen < writers*each {
				evs, err := sub.Next(ctx)
				if err != nil {
					t.Errorf("reader %d after %d: %v", r, seen, err)
					return
				}
				for _, e := range evs {
					if e.ID <= prev {
						t.Errorf("reader %d: id %d after %d", r, e.ID, prev)
					}
					prev = e.ID
					seen++
				}
			}
		})
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				say(j, fmt.Sprint("c", w), fmt.Sprint(i))
			}
		})
	}
	wg.Wait()
	readers.Wait()
}
