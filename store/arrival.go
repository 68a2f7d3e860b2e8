package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/dgraph-io/badger/v4"
)

// LastArrival is the arrival cursor of the newest stored message (0 when
// the store is empty). Since(0, …) reads from the first message.
func (s *Store) LastArrival() uint64 {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.seq
}

// Since returns up to limit messages written after the arrival cursor, in
// the order they were written (across channels; imported history arrives
// when it is imported), and the cursor of the last one returned (cursor
// itself when there is nothing new).
func (s *Store) Since(cursor uint64, limit int) ([]*Message, uint64, error) {
	return s.SinceUpTo(cursor, math.MaxUint64, limit)
}

// SinceUpTo is Since, stopping at the arrival cursor upto: none of the
// messages it returns arrived after it.
func (s *Store) SinceUpTo(cursor, upto uint64, limit int) ([]*Message, uint64, error) {
	if limit <= 0 {
		limit = 1000
	}
	var out []*Message
	next := cursor
	err := s.db.View(func(txn *badger.Txn) error {
		// Values stay in the tables (none reaches the value log), so
		// prefetching them would only copy batches ahead of need.
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixArrival)})
		defer it.Close()
		for it.Seek(arrivalKey(cursor + 1)); it.Valid() && len(out) < limit; it.Next() {
			var es []arrivalEntry
			err := it.Item().Value(func(v []byte) (err error) {
				es, err = arrivals(it.Item().Key(), v)
				return err
			})
			if err != nil {
				return err
			}
			for _, e := range es {
				if e.seq <= cursor {
					continue // in a batch the cursor is inside of
				}
				if len(out) == limit || e.seq > upto {
					return nil
				}
				item, err := txn.Get(messageKey(e.channel, e.id))
				if errors.Is(err, badger.ErrKeyNotFound) {
					next = e.seq // deleted since; skip it
					continue
				}
				if err != nil {
					return err
				}
				m := new(Message)
				if err := item.Value(func(b []byte) error { return json.Unmarshal(b, m) }); err != nil {
					return fmt.Errorf("decode message %s: %w", e.id, err)
				}
				out = append(out, m)
				next = e.seq
			}
		}
		return nil
	})
	if err != nil {
		return nil, cursor, fmt.Errorf("store: since %d: %w", cursor, err)
	}
	return out, next, nil
}

// seedArrivals continues the arrival log after its last entry. A store
// written before the log existed gets one, in id order.
func (s *Store) seedArrivals() error {
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: []byte(prefixArrival)})
		defer it.Close()
		it.Seek(prefixEnd([]byte(prefixArrival)))
		if it.Valid() {
			k := it.Item().Key()
			s.seq = binary.BigEndian.Uint64(k[len(prefixArrival):])
		}
		return nil
	})
	if err != nil || s.seq > 0 {
		return err
	}
	// Backfill from the id index.
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	err = s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixMsgID), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			id := it.Item().KeyCopy(nil)[len(prefixMsgID):]
			ch, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			s.seq++
			if err := wb.Set(arrivalKey(s.seq), append(id, ch...)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		return fmt.Errorf("store: build the arrival log: %w", err)
	}
	return nil
}

// ScanAll reads every message of every channel, in channel order and, within
// a channel, in id order, handing them to fn in batches of up to batch. It
// reads one consistent snapshot and returns the arrival cursor of that
// snapshot: Since(cursor, …) then yields exactly the messages written
// after it. Reading in key order is sequential, so a bulk load (an
// indexer's cold start) is several times faster than following the
// arrival log.
func (s *Store) ScanAll(batch int, fn func([]*Message) error) (uint64, error) {
	if batch <= 0 {
		batch = 1000
	}
	var cursor uint64
	err := s.db.View(func(txn *badger.Txn) error {
		last := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: []byte(prefixArrival)})
		last.Seek(prefixEnd([]byte(prefixArrival)))
		if last.Valid() {
			k := last.Item().Key()
			cursor = binary.BigEndian.Uint64(k[len(prefixArrival):])
		}
		last.Close()
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixMessage), PrefetchValues: true, PrefetchSize: 256})
		defer it.Close()
		out := make([]*Message, 0, batch)
		for it.Rewind(); it.Valid(); it.Next() {
			m, err := decodeItem(it.Item())
			if err != nil {
				return err
			}
			out = append(out, m)
			if len(out) == batch {
				if err := fn(out); err != nil {
					return err
				}
				out = make([]*Message, 0, batch)
			}
		}
		if len(out) > 0 {
			return fn(out)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: scan: %w", err)
	}
	return cursor, nil
}
