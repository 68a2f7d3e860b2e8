package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	"github.com/cyan-agent/cyan/journal"
)

// postingDB is the store's database as the log writes it: every committed
// write is told on the journal as journal.RecordsChanged, so readers of
// the records (recall) index them again. (A write of a mark or a pending
// step is told too; readers coalesce.)
type postingDB struct {
	*badger.DB
	j *journal.Journal
}

// Update runs fn in a read-write transaction and tells the journal when
// it committed.
func (d postingDB) Update(fn func(txn *badger.Txn) error) error {
	err := d.DB.Update(fn)
	if err == nil {
		d.j.Post(journal.New(journal.RecordsChanged, "", nil))
	}
	return err
}

// getJSON reads key into v; found is false when the key does not exist.
func getJSON(txn *badger.Txn, key []byte, v any) (found bool, err error) {
	it, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, it.Value(func(b []byte) error { return json.Unmarshal(b, v) })
}

func setJSON(txn *badger.Txn, key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return txn.Set(key, b)
}

func exists(txn *badger.Txn, key []byte) (bool, error) {
	_, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

// putEvent writes a record and its indexes, moving it if its start changed.
func putEvent(txn *badger.Txn, e *Event) error {
	id, err := uuid.Parse(e.ID)
	if err != nil {
		return fmt.Errorf("record id %q: %w", e.ID, err)
	}
	key := eventKey(e)
	if it, err := txn.Get(eventIDKey(id)); err == nil {
		old, err := it.ValueCopy(nil)
		if err != nil {
			return err
		}
		if !bytes.Equal(old, key) {
			if err := txn.Delete(old); err != nil {
				return err
			}
		}
	} else if !errors.Is(err, badger.ErrKeyNotFound) {
		return err
	}
	pending := *e
	pending.Label, pending.MemoryState.R = "", 0 // computed when read
	if err := setJSON(txn, key, &pending); err != nil {
		return err
	}
	if err := txn.Set(eventIDKey(id), key); err != nil {
		return err
	}
	if e.Level == LevelEvent && e.Source.FirstMessageID != "" {
		if err := txn.Set(firstKey(e.Source.Channel, e.Source.FirstMessageID), []byte(e.ID)); err != nil {
			return err
		}
	}
	if e.Pending != nil {
		return txn.Set(pendingKey(id), nil)
	}
	return txn.Delete(pendingKey(id))
}

// deleteEvent removes a record and its indexes.
func deleteEvent(txn *badger.Txn, e *Event) error {
	id, err := uuid.Parse(e.ID)
	if err != nil {
		return err
	}
	for _, k := range [][]byte{eventKey(e), eventIDKey(id), pendingKey(id)} {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	if e.Level == LevelEvent && e.Source.FirstMessageID != "" {
		return txn.Delete(firstKey(e.Source.Channel, e.Source.FirstMessageID))
	}
	return nil
}

// getEvent reads a record by id.
func getEvent(txn *badger.Txn, id string) (*Event, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a record id", ErrInvalid, id)
	}
	it, err := txn.Get(eventIDKey(u))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("record %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	key, err := it.ValueCopy(nil)
	if err != nil {
		return nil, err
	}
	e := new(Event)
	found, err := getJSON(txn, key, e)
	if err == nil && !found {
		err = fmt.Errorf("record %s: index points at nothing: %w", id, ErrNotFound)
	}
	return e, err
}

// eventsIn returns a channel's records of a level whose start is in
// [from, to), oldest first.
func eventsIn(txn *badger.Txn, channel string, level Level, from, to time.Time) ([]*Event, error) {
	prefix := levelPrefix(channel, level)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 64})
	defer it.Close()
	end := append(append([]byte(nil), prefix...), timeBytes(to)...)
	var out []*Event
	for it.Seek(append(append([]byte(nil), prefix...), timeBytes(from)...)); it.Valid(); it.Next() {
		if bytes.Compare(it.Item().Key(), end) >= 0 {
			break
		}
		e := new(Event)
		if err := it.Item().Value(func(b []byte) error { return json.Unmarshal(b, e) }); err != nil {
			return nil, fmt.Errorf("decode record %x: %w", it.Item().Key(), err)
		}
		out = append(out, e)
	}
	return out, nil
}

// firstEventFrom is the start of a channel's first record of a level
// that starts at or after from (zero: none).
func firstEventFrom(txn *badger.Txn, channel string, level Level, from time.Time) (time.Time, error) {
	prefix := levelPrefix(channel, level)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	it.Seek(append(append([]byte(nil), prefix...), timeBytes(from)...))
	if !it.Valid() {
		return time.Time{}, nil
	}
	k := it.Item().Key()
	if len(k) < len(prefix)+8 {
		return time.Time{}, fmt.Errorf("record key %x is too short", k)
	}
	return timeOfBytes(k[len(prefix) : len(prefix)+8]), nil
}

// lastEvents returns up to n of a channel's newest records of a level,
// newest first, keeping only those keep accepts (nil keeps all).
func lastEvents(txn *badger.Txn, channel string, level Level, n int, keep func(*Event) bool) ([]*Event, error) {
	return eventsBefore(txn, channel, level, time.Time{}, n, keep)
}

// eventsBefore is lastEvents among the records that start before t (zero:
// all of them).
func eventsBefore(txn *badger.Txn, channel string, level Level, t time.Time, n int, keep func(*Event) bool) ([]*Event, error) {
	if n <= 0 {
		return nil, nil
	}
	prefix := levelPrefix(channel, level)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true, PrefetchValues: true, PrefetchSize: min(n, 64)})
	defer it.Close()
	from := prefixEnd(prefix)
	if !t.IsZero() {
		from = append(append([]byte(nil), prefix...), timeBytes(t)...)
	}
	var out []*Event
	for it.Seek(from); it.Valid() && len(out) < n; it.Next() {
		e := new(Event)
		if err := it.Item().Value(func(b []byte) error { return json.Unmarshal(b, e) }); err != nil {
			return nil, fmt.Errorf("decode record %x: %w", it.Item().Key(), err)
		}
		if keep == nil || keep(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func getEventByRawID(txn *badger.Txn, raw []byte) (*Event, error) {
	u, err := uuid.FromBytes(raw)
	if err != nil {
		return nil, err
	}
	return getEvent(txn, u.String())
}
