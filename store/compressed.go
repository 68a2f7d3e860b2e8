package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
)

// NewID returns a fresh id from the same monotonic uuid v7 sequence as
// message ids, for records other packages keep (generate traces).
func (s *Store) NewID(now time.Time) string { return s.ids.next(now).String() }

// Compressed is the short form of a model message that main-virtual shows
// in place of the full text once the context outgrows its budget.
type Compressed struct {
	Text string    `json:"text"`
	Time time.Time `json:"time"`
	// TraceID is the generate trace of the call that made it.
	TraceID string `json:"trace_id,omitempty"`
}

// PutCompressed records the compressed form of message id, durably, so a
// message is compressed at most once.
func (s *Store) PutCompressed(id string, c Compressed) error {
	u, err := uuid.Parse(id)
	if err != nil {
		return fmt.Errorf("%w: %q is not a message id", ErrInvalid, id)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := s.guard.check(); err != nil {
		return fmt.Errorf("store: put compressed %s: %w", id, err)
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(compressedKey(u), b) }); err != nil {
		return fmt.Errorf("store: put compressed %s: %w", id, err)
	}
	return nil
}

// CompressedOf returns the compressed forms recorded for the given message
// ids; ids without one are absent from the map.
func (s *Store) CompressedOf(ids ...string) (map[string]Compressed, error) {
	out := make(map[string]Compressed)
	err := s.db.View(func(txn *badger.Txn) error {
		for _, id := range ids {
			u, err := uuid.Parse(id)
			if err != nil {
				continue
			}
			it, err := txn.Get(compressedKey(u))
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			var c Compressed
			if err := it.Value(func(v []byte) error { return json.Unmarshal(v, &c) }); err != nil {
				return fmt.Errorf("decode compressed %s: %w", id, err)
			}
			out[id] = c
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: compressed: %w", err)
	}
	return out, nil
}
