package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
)

// A message its sender edited on the platform keeps its place and id; its
// Text becomes the newest version and Edited says when. A message of the
// agent's own that the platform withdrew (an admin's recall) is marked
// like any recalled message, found by its stored id.

// EditExternal replaces the text of the channel's message with an
// external id, durably, with tokens its new token count (0: scaled from
// the old count by length). It returns the message, ErrNotFound when the
// channel holds none with that id.
func (s *Store) EditExternal(channel, externalID, text string, tokens int, at time.Time) (*Message, error) {
	var m *Message
	err := s.db.Update(func(txn *badger.Txn) error {
		u, err := externalID16(txn, channel, externalID)
		if err != nil {
			return err
		}
		m, err = updateMessage(txn, channel, u, func(m *Message) {
			if tokens <= 0 && len(m.Text) > 0 {
				tokens = max(1, m.Tokens*len(text)/len(m.Text))
			}
			m.Text, m.Tokens, m.Edited = text, tokens, at.UTC()
		})
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("store: message %q of %s: %w", externalID, channel, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: edit %q of %s: %w", externalID, channel, err)
	}
	return m, nil
}

// MarkRecalledID marks the channel's message with a stored id recalled at
// the given time, as MarkRecalled does by external id. ErrNotFound: the
// channel holds no such message.
func (s *Store) MarkRecalledID(channel, id string, at time.Time) (*Message, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a message id", ErrInvalid, id)
	}
	var m *Message
	err = s.db.Update(func(txn *badger.Txn) error {
		m, err = updateMessage(txn, channel, u, func(m *Message) {
			if !m.IsRecalled() {
				m.Recalled = at.UTC()
			}
		})
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("store: message %s of %s: %w", id, channel, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: recall %s of %s: %w", id, channel, err)
	}
	return m, nil
}

// updateMessage reads a message of a channel, changes it and writes it
// back, in txn.
func updateMessage(txn *badger.Txn, channel string, u uuid.UUID, change func(*Message)) (*Message, error) {
	key := messageKey(channel, u)
	it, err := txn.Get(key)
	if err != nil {
		return nil, err
	}
	var m Message
	if err := it.Value(func(v []byte) error { return json.Unmarshal(v, &m) }); err != nil {
		return nil, err
	}
	change(&m)
	b, err := json.Marshal(&m)
	if err != nil {
		return nil, err
	}
	return &m, txn.Set(key, b)
}
