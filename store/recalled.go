package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
)

// A message its sender withdrew on the platform (a QQ recall) stays in
// the store, marked: Message.Recalled is when it was withdrawn. Readers
// that build what the model sees (prompts, recall results) leave it out;
// export keeps it, mark and all.

// IsRecalled reports whether the message was withdrawn by its sender.
func (m *Message) IsRecalled() bool { return !m.Recalled.IsZero() }

// ByExternal returns the message of a channel with an external id (its
// platform id), ErrNotFound when the channel holds none.
func (s *Store) ByExternal(channel, externalID string) (*Message, error) {
	var m Message
	err := s.db.View(func(txn *badger.Txn) error {
		u, err := externalID16(txn, channel, externalID)
		if err != nil {
			return err
		}
		it, err := txn.Get(messageKey(channel, u))
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error { return json.Unmarshal(v, &m) })
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("store: message %q of %s: %w", externalID, channel, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: message %q of %s: %w", externalID, channel, err)
	}
	return &m, nil
}

func externalID16(txn *badger.Txn, channel, externalID string) (uuid.UUID, error) {
	it, err := txn.Get(externalKey(channel, externalID))
	if err != nil {
		return uuid.UUID{}, err
	}
	var u uuid.UUID
	err = it.Value(func(v []byte) error {
		var perr error
		u, perr = uuid.FromBytes(v)
		return perr
	})
	return u, err
}

// MarkRecalled marks the message of a channel with an external id
// recalled at the given time, durably; a message already marked keeps its
// first time. It returns the message, ErrNotFound when the channel holds
// none with that id.
func (s *Store) MarkRecalled(channel, externalID string, at time.Time) (*Message, error) {
	var m Message
	err := s.db.Update(func(txn *badger.Txn) error {
		u, err := externalID16(txn, channel, externalID)
		if err != nil {
			return err
		}
		key := messageKey(channel, u)
		it, err := txn.Get(key)
		if err != nil {
			return err
		}
		if err := it.Value(func(v []byte) error { return json.Unmarshal(v, &m) }); err != nil {
			return err
		}
		if m.IsRecalled() {
			return nil
		}
		m.Recalled = at.UTC()
		b, err := json.Marshal(&m)
		if err != nil {
			return err
		}
		return txn.Set(key, b)
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("store: message %q of %s: %w", externalID, channel, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: recall %q of %s: %w", externalID, channel, err)
	}
	return &m, nil
}
