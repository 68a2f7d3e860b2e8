package store

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
)

// smallTxns makes a transaction a few hundred messages, so an import of
// a thousand spans several.
func smallTxns(o badger.Options) badger.Options {
	return o.WithMemTableSize(1 << 20).WithValueThreshold(64 << 10)
}

// arrivalKeys counts the arrival log's single entries and batches.
func arrivalKeys(t *testing.T, s *Store) (singles, batches int) {
	t.Helper()
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixArrival)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if len(it.Item().Key()) == len(prefixArrival)+8 {
				singles++
			} else {
				batches++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return singles, batches
}

// readAll follows the arrival log from 0 by limit at a time and returns
// the messages' texts and the cursor after each read.
func readAll(t *testing.T, s *Store, limit int) (got []string, cursors []uint64) {
	t.Helper()
	var cur uint64
	for {
		ms, next, err := s.Since(cur, limit)
		if err != nil {
			t.Fatalf("Since(%d, %d): %v", cur, limit, err)
		}
		if len(ms) > limit || (len(ms) == 0) != (next == cur) {
			t.Fatalf("Since(%d, %d) = %d messages, cursor %d", cur, limit, len(ms), next)
		}
		if next == cur {
			return got, cursors
		}
		if next < cur {
			t.Fatalf("Since(%d, %d) went back to %d", cur, limit, next)
		}
		got = append(got, texts(ms)...)
		cursors = append(cursors, next)
		cur = next
	}
}

// An import writes its arrivals a transaction at a time, one key each;
// a reader following the log by any step (one message, a few, more than
// a batch) reads every message once, in the order written, beside live
// messages' single entries, skipping a message deleted from inside a
// batch, across a restart.
func TestArrivalBatchesReadInOrder(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, tune: smallTxns})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	var want []string
	live := func(text string) {
		t.Helper()
		if err := s.Append(t0, &Message{Channel: "live", Role: RoleUser, Text: text}); err != nil {
			t.Fatal(err)
		}
		want = append(want, text)
	}
	imp := func(n int, tag string) []*Message {
		t.Helper()
		var msgs []*Message
		for i := range n {
			msgs = append(msgs, &Message{Channel: fmt.Sprintf("c%d", i%3), User: "u", Time: t0.Add(-time.Duration(n-i) * time.Minute),
				Text: fmt.Sprintf("%s %d, with words enough that a few hundred fill a transaction", tag, i)})
		}
		added, err := s.Import(msgs)
		if err != nil || len(added) != n {
			t.Fatalf("Import %s = %d, %v", tag, len(added), err)
		}
		want = append(want, texts(msgs)...)
		return added
	}
	live("live 1")
	big := imp(1000, "big")
	live("live 2")
	imp(1, "one")
	imp(0, "none")
	live("live 3")

	singles, batches := arrivalKeys(t, s)
	if singles != 3 || batches < 3 {
		t.Fatalf("arrival log: %d single entries and %d batches; want the 3 live messages' and a batch a transaction (3 or more)", singles, batches)
	}
	// Delete a message from the middle of the first batch: readers skip it.
	gone := big[100]
	id := uuid.MustParse(gone.ID)
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(messageKey(gone.Channel, id)) }); err != nil {
		t.Fatal(err)
	}
	want = slices.DeleteFunc(want, func(x string) bool { return x == gone.Text })

	check := func(when string) {
		t.Helper()
		var whole []uint64
		for _, limit := range []int{1, 7, 250, 5000} {
			got, cursors := readAll(t, s, limit)
			if !slices.Equal(got, want) {
				t.Fatalf("%s, %d at a time: read %d messages, want %d (first difference at %d)", when, limit, len(got), len(want), firstDiff(got, want))
			}
			if last := cursors[len(cursors)-1]; last != s.LastArrival() || last != uint64(len(want)+1) {
				t.Fatalf("%s, %d at a time: last cursor %d, LastArrival %d, want %d", when, limit, last, s.LastArrival(), len(want)+1)
			}
			if limit == 1 {
				whole = cursors
			}
		}
		// One message at a time, each cursor is its message's arrival:
		// the deleted one's (102: live 1, then big 0 …) is passed over.
		if skip := slices.Index(whole, 101); skip < 0 || whole[skip+1] != 103 {
			t.Fatalf("%s: one at a time, the cursors around the deleted message are %v", when, whole[max(0, skip-1):min(len(whole), skip+2)])
		}
	}
	check("open")
	s.Close()
	if s, err = Open(Options{Dir: dir, tune: smallTxns}); err != nil {
		t.Fatal(err)
	}
	check("reopened")
	live("live 4")
	check("after a live message")
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A salvage writes an import's batches again as single entries, of the
// messages it keeps: the new data dir reads the same messages at the same
// arrivals, and a lost message's entry is dropped.
func TestSalvageSplitsArrivalBatches(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, tune: smallTxns})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(t0, &Message{Channel: "live", Role: RoleUser, Text: "live 1"}); err != nil {
		t.Fatal(err)
	}
	var msgs []*Message
	for i := range 800 {
		msgs = append(msgs, &Message{Channel: fmt.Sprintf("c%d", i%2), Time: t0.Add(-time.Duration(800-i) * time.Minute),
			Text: fmt.Sprintf("imported %d, with words enough that a few hundred fill a transaction", i)})
	}
	added, err := s.Import(msgs)
	if err != nil || len(added) != len(msgs) {
		t.Fatalf("Import = %d, %v", len(added), err)
	}
	lost := added[500]
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(messageKey(lost.Channel, uuid.MustParse(lost.ID))) }); err != nil {
		t.Fatal(err)
	}
	before, beforeCursors := readAll(t, s, 1)
	if _, batches := arrivalKeys(t, s); batches < 2 {
		t.Fatalf("%d batches; the import should span several transactions", batches)
	}
	s.Close()

	rep, n := salvaged(t, dir)
	if rep.Messages != len(msgs) || rep.Dropped < 1 {
		t.Fatalf("salvage report %+v: want %d messages and the lost one's entries dropped", rep, len(msgs))
	}
	after, afterCursors := readAll(t, n, 1)
	if !slices.Equal(before, after) || !slices.Equal(beforeCursors, afterCursors) {
		t.Fatalf("after the salvage: %d messages at cursors …%v, before %d at …%v", len(after), afterCursors[max(0, len(afterCursors)-3):], len(before), beforeCursors[max(0, len(beforeCursors)-3):])
	}
	if singles, batches := arrivalKeys(t, n); batches != 0 || singles != len(msgs) {
		t.Fatalf("salvaged arrival log: %d single entries, %d batches; want %d single", singles, batches, len(msgs))
	}
	if n.LastArrival() != s.LastArrival() {
		t.Fatalf("LastArrival %d after the salvage, %d before", n.LastArrival(), s.LastArrival())
	}
}

// salvaged salvages the stopped data dir into a new one and opens that.
func salvaged(t *testing.T, dir string) (*SalvageReport, *Store) {
	t.Helper()
	to := t.TempDir() + "/new"
	rep, err := salvage(dir, to, nil, smallTxns)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(Options{Dir: to, tune: smallTxns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return rep, n
}

// FuzzArrivals: no key or value, however damaged, panics the decoder or
// decodes to entries past its key's arrival; a batch encoded from any
// entries decodes to them.
func FuzzArrivals(f *testing.F) {
	var b arrivalBatch
	b.add(uuid.UUID{1}, "qq:group:1")
	b.add(uuid.UUID{2}, "tg:-100")
	b.add(uuid.UUID{3}, "qq:group:1")
	f.Add(uint64(9), true, b.encode(), "a\x00b")
	f.Add(uint64(1), false, append(make([]byte, 16), "cli"...), "")
	f.Add(uint64(3), true, []byte{3, 1, 1, 'x'}, "x")
	f.Fuzz(func(t *testing.T, last uint64, batch bool, v []byte, names string) {
		k := arrivalKey(last)
		if batch {
			k = arrivalBatchKey(last)
		}
		es, err := arrivals(k, v)
		if err == nil {
			for i, e := range es {
				if e.seq > last || (i > 0 && e.seq != es[i-1].seq+1) || es[len(es)-1].seq != last {
					t.Fatalf("entries %v from key %d", es, last)
				}
			}
		}
		// Encode entries made from the input and decode them back.
		var in arrivalBatch
		chans := bytes.Split([]byte(names), []byte{0})
		for i := 0; i+16 <= len(v) && i < 16*64; i += 16 {
			in.add(uuid.UUID(v[i:i+16]), string(chans[(i/16)%len(chans)]))
		}
		if in.len() == 0 || last < uint64(in.len()) {
			return
		}
		out, err := arrivals(arrivalBatchKey(last), in.encode())
		if err != nil || len(out) != in.len() {
			t.Fatalf("decode of an encoded batch of %d: %d, %v", in.len(), len(out), err)
		}
		for i, e := range out {
			if e.id != in.ids[i] || e.channel != in.names[in.chans[i]] || e.seq != last-uint64(len(out)-1-i) {
				t.Fatalf("entry %d decodes to %+v", i, e)
			}
		}
	})
}

// An import records format 2, which this store opens; a store recording a
// newer format is refused with an error that says what to do.
func TestNewerFormatRefused(t *testing.T) {
	dir := t.TempDir()
	s := openDir(t, dir)
	if _, err := s.Import([]*Message{{Channel: "c", Text: "old", Time: t0}}); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		var v []byte
		err := s.db.View(func(txn *badger.Txn) error {
			item, err := txn.Get([]byte(formatKey))
			if err != nil {
				return err
			}
			v, err = item.ValueCopy(nil)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	if f := read(); f != "2" {
		t.Fatalf("format after an import = %q, want 2", f)
	}
	s.Close()
	s = openDir(t, dir)
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(formatKey), []byte("3")) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(Options{Dir: dir})
	if !errors.Is(err, ErrNewerFormat) || !strings.Contains(err.Error(), "run the newer cyan") {
		t.Fatalf("Open of a format-3 store = %v", err)
	}
}

// A batch whose value no longer decodes is dropped by a salvage, and its
// messages get arrival entries anew: the new data dir reads every message.
func TestSalvageRebuildsADamagedBatch(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, tune: smallTxns})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*Message
	for i := range 800 {
		msgs = append(msgs, &Message{Channel: "c", Time: t0.Add(time.Duration(i) * time.Minute),
			Text: fmt.Sprintf("imported %d, with words enough that a few hundred fill a transaction", i)})
	}
	if _, err := s.Import(msgs); err != nil {
		t.Fatal(err)
	}
	var first []byte
	err = s.db.Update(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixArrival)})
		it.Rewind()
		first = it.Item().KeyCopy(nil)
		it.Close()
		return txn.Set(first, []byte{0xff, 0xff, 0xff})
	})
	if err != nil || len(first) != len(prefixArrival)+9 {
		t.Fatalf("damaging the first batch (key %x): %v", first, err)
	}
	if _, _, err := s.Since(0, 10); !errors.Is(err, errArrival) {
		t.Fatalf("Since over a damaged batch = %v, want a corrupt arrival entry", err)
	}
	s.Close()
	rep, n := salvaged(t, dir)
	if rep.Dropped != 1 || rep.Reindexed == 0 {
		t.Fatalf("salvage report %+v: want the batch dropped and its messages reindexed", rep)
	}
	got, _ := readAll(t, n, 100)
	slices.Sort(got)
	want := texts(msgs)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("after the salvage the log reads %d messages, want %d", len(got), len(want))
	}
}
