package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cyan-agent/cyan/journal"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
)

// RestoreMessages stores messages exactly as an export holds them — raw is
// each message's stored JSON, its id kept — with the indexes the store
// keeps beside them (id, arrival, external id, tool results, channel). A
// message whose id is already stored is kept as it is and skipped. It
// returns how many were added.
func (s *Store) RestoreMessages(raw []json.RawMessage) (int, error) {
	type parsed struct {
		m   Message
		id  uuid.UUID
		raw []byte
	}
	ps := make([]parsed, 0, len(raw))
	for i, r := range raw {
		var p parsed
		if err := json.Unmarshal(r, &p.m); err != nil {
			return 0, fmt.Errorf("%w: message %d: %v", ErrInvalid, i+1, err)
		}
		if err := ValidChannel(p.m.Channel); err != nil {
			return 0, fmt.Errorf("message %d: %w", i+1, err)
		}
		id, err := uuid.Parse(p.m.ID)
		if err != nil {
			return 0, fmt.Errorf("%w: message %d: id %q: %v", ErrInvalid, i+1, p.m.ID, err)
		}
		p.id, p.raw = id, r
		ps = append(ps, p)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.guard.check(); err != nil {
		return 0, fmt.Errorf("store: restore: %w", err)
	}
	added := 0
	seq := s.seq
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	seen := map[uuid.UUID]bool{}
	channels := map[string]bool{}
	err := s.db.View(func(txn *badger.Txn) error {
		for _, p := range ps {
			if seen[p.id] {
				continue
			}
			seen[p.id] = true
			if _, err := txn.Get(idKey(p.id)); err == nil {
				continue
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			m := &p.m
			if !channels[m.Channel] {
				channels[m.Channel] = true
				if _, err := txn.Get(channelKey(m.Channel)); errors.Is(err, badger.ErrKeyNotFound) {
					cb, _ := json.Marshal(Channel{Name: m.Channel, Created: m.Time})
					if err := wb.Set(channelKey(m.Channel), cb); err != nil {
						return err
					}
				}
			}
			seq++
			sets := [][2][]byte{
				{messageKey(m.Channel, p.id), p.raw},
				{idKey(p.id), []byte(m.Channel)},
				{arrivalKey(seq), arrivalValue(p.id, m.Channel)},
			}
			if m.Role == RoleTool {
				sets = append(sets, [2][]byte{append(toolIndexPrefix(m.Channel), p.id[:]...), nil})
			}
			if m.ExternalID != "" {
				sets = append(sets, [2][]byte{externalKey(m.Channel, m.ExternalID), p.id[:]})
			}
			for _, kv := range sets {
				if err := wb.Set(kv[0], kv[1]); err != nil {
					return err
				}
			}
			added++
		}
		return nil
	})
	if err == nil {
		err = wb.Flush()
	}
	if err == nil {
		err = s.guard.after()
	}
	if err != nil {
		return 0, fmt.Errorf("store: restore messages: %w", err)
	}
	s.seq = seq
	s.noteWrite()
	if added > 0 {
		for _, p := range ps {
			s.ids.seedAtLeast(p.id)
		}
		s.journal.Post(journal.New(journal.MessagesImported, "", journal.Imported{Added: added, Skipped: len(raw) - added}))
	}
	return added, nil
}

// RestoreChannel keeps a channel's record (its creation time) as an export
// holds it, unless the channel already has one.
func (s *Store) RestoreChannel(c Channel) error {
	if err := ValidChannel(c.Name); err != nil {
		return err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	err = s.db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(channelKey(c.Name)); err == nil {
			return nil
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		return txn.Set(channelKey(c.Name), b)
	})
	if err != nil {
		return fmt.Errorf("store: restore channel %s: %w", c.Name, err)
	}
	return nil
}

// The readers below work inside a read transaction of DB, so that an export
// reads the store and the other packages' key spaces at one moment.

// ChannelsIn lists the channels, in name order.
func (s *Store) ChannelsIn(txn *badger.Txn) ([]Channel, error) {
	var out []Channel
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixChannel), PrefetchValues: true})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		var c Channel
		if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &c) }); err != nil {
			return nil, fmt.Errorf("store: channel %q: %w", it.Item().Key()[len(prefixChannel):], err)
		}
		out = append(out, c)
	}
	return out, nil
}

// RawMessagesIn hands fn each message of a channel, oldest first, as its
// stored JSON (valid only during the call).
func (s *Store) RawMessagesIn(txn *badger.Txn, channel string, fn func(raw []byte) error) error {
	prefix := messagePrefix(channel)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 256})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		if err := it.Item().Value(fn); err != nil {
			return err
		}
	}
	return nil
}

// CompressedIn hands fn each compressed form, by message id.
func (s *Store) CompressedIn(txn *badger.Txn, fn func(id string, c Compressed) error) error {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixCompressed), PrefetchValues: true})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		id, err := uuid.FromBytes(it.Item().Key()[len(prefixCompressed):])
		if err != nil {
			return fmt.Errorf("store: compressed key %x: %w", it.Item().Key(), err)
		}
		var c Compressed
		if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &c) }); err != nil {
			return fmt.Errorf("store: compressed %s: %w", id, err)
		}
		if err := fn(id.String(), c); err != nil {
			return err
		}
	}
	return nil
}

// RestoreCompressed keeps a message's compressed form as an export holds
// it, unless one is stored; it reports whether it was added.
func (s *Store) RestoreCompressed(id string, c Compressed) (bool, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return false, fmt.Errorf("%w: %q is not a message id", ErrInvalid, id)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return false, err
	}
	added := false
	err = s.db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(compressedKey(u)); err == nil {
			return nil
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		added = true
		return txn.Set(compressedKey(u), b)
	})
	if err != nil {
		return false, fmt.Errorf("store: restore compressed %s: %w", id, err)
	}
	return added, nil
}
