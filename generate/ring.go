package generate

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	"github.com/cyan-agent/cyan/store"
)

// DefaultKeep is how many traces a ring keeps unless told otherwise.
const DefaultKeep = 1000

// Traces is a bounded ring of traces in the store: the newest Keep are
// kept, the oldest dropped as new ones arrive. Each trace is stored whole
// and as a Summary, so listings read only the summaries.
type Traces struct {
	st   *store.Store
	db   *badger.DB
	keep int

	mu    sync.Mutex
	count int
}

// OpenTraces opens the ring kept in st; keep ≤ 0 means DefaultKeep. A ring
// that holds more than keep (after keep was lowered) is trimmed now.
func OpenTraces(st *store.Store, keep int) (*Traces, error) {
	if st == nil {
		return nil, errors.New("generate: traces need a store")
	}
	if keep <= 0 {
		keep = DefaultKeep
	}
	t := &Traces{st: st, db: st.DB(), keep: keep}
	err := t.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixGenerateSummary)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			t.count++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("generate: open traces: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.trim(); err != nil {
		return nil, err
	}
	return t, nil
}

// newID returns the id of a new trace.
func (t *Traces) newID(now time.Time) string { return t.st.NewID(now) }

func key(prefix string, id uuid.UUID) []byte {
	return append([]byte(prefix), id[:]...)
}

// Put stores a trace (its ID must come from this ring's store) and drops
// the oldest beyond the bound.
func (t *Traces) Put(tr *Trace) error {
	id, err := uuid.Parse(tr.ID)
	if err != nil {
		return fmt.Errorf("generate: trace id %q: %w", tr.ID, err)
	}
	full, err := json.Marshal(tr)
	if err != nil {
		return fmt.Errorf("generate: encode trace: %w", err)
	}
	sum, err := json.Marshal(tr.Summary())
	if err != nil {
		return fmt.Errorf("generate: encode trace: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fresh := true
	err = t.db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(key(store.PrefixGenerateSummary, id)); err == nil {
			fresh = false
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if err := txn.Set(key(store.PrefixGenerateTrace, id), full); err != nil {
			return err
		}
		return txn.Set(key(store.PrefixGenerateSummary, id), sum)
	})
	if err != nil {
		return fmt.Errorf("generate: put trace %s: %w", tr.ID, err)
	}
	if fresh {
		t.count++
	}
	return t.trim()
}

// trim drops the oldest traces beyond the bound. t.mu is held.
func (t *Traces) trim() error {
	over := t.count - t.keep
	if over <= 0 {
		return nil
	}
	var ids [][]byte
	err := t.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixGenerateSummary)})
		defer it.Close()
		for it.Rewind(); it.Valid() && len(ids) < over; it.Next() {
			ids = append(ids, it.Item().KeyCopy(nil)[len(store.PrefixGenerateSummary):])
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("generate: trim traces: %w", err)
	}
	wb := t.db.NewWriteBatch()
	defer wb.Cancel()
	for _, id := range ids {
		if err := wb.Delete(append([]byte(store.PrefixGenerateSummary), id...)); err != nil {
			return fmt.Errorf("generate: trim traces: %w", err)
		}
		if err := wb.Delete(append([]byte(store.PrefixGenerateTrace), id...)); err != nil {
			return fmt.Errorf("generate: trim traces: %w", err)
		}
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("generate: trim traces: %w", err)
	}
	t.count -= len(ids)
	return nil
}

// Len is how many traces the ring holds.
func (t *Traces) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.count
}

// Filter selects traces to list.
type Filter struct {
	Channel string // "": every channel (and none)
	Name    string // "": every name
	Last    int    // the newest this many; ≤ 0: 20
}

// List returns the summaries of the newest traces f selects, oldest first.
func (t *Traces) List(f Filter) ([]Summary, error) {
	if f.Last <= 0 {
		f.Last = 20
	}
	var out []Summary
	err := t.db.View(func(txn *badger.Txn) error {
		prefix := []byte(store.PrefixGenerateSummary)
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: prefix, PrefetchValues: true, PrefetchSize: min(f.Last, 64)})
		defer it.Close()
		end := append(append([]byte(nil), prefix...), 0xff)
		for it.Seek(end); it.Valid() && len(out) < f.Last; it.Next() {
			var s Summary
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &s) }); err != nil {
				return fmt.Errorf("decode %x: %w", it.Item().Key(), err)
			}
			if (f.Channel == "" || s.Channel == f.Channel) && (f.Name == "" || s.Name == f.Name) {
				out = append(out, s)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("generate: list traces: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Get returns one whole trace. A trace that is not (or no longer) in the
// ring is an error wrapping store.ErrNotFound.
func (t *Traces) Get(id string) (*Trace, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a trace id", store.ErrInvalid, id)
	}
	var tr Trace
	err = t.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(key(store.PrefixGenerateTrace, u))
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error { return json.Unmarshal(v, &tr) })
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("generate: trace %s: %w (the ring keeps the newest %d)", id, store.ErrNotFound, t.keep)
	}
	if err != nil {
		return nil, fmt.Errorf("generate: get trace %s: %w", id, err)
	}
	return &tr, nil
}
