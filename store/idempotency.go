package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
)

// A client that sends a write again because it never saw the answer (a
// timeout, a daemon restarted under it) names the write with an
// idempotency key, and the store keeps the first write's outcome under it:
//   - a live message's key is its ExternalID, kept in the channel's
//     external-id index in the same transaction as the message (so a
//     message is stored once per key and channel, even across a kill);
//   - an import batch's key keeps the batch's answer (ImportBatch).

// ErrDuplicate: a message's external id (its idempotency key) is already
// held by another message of the channel; nothing was stored. The error
// (a *DuplicateError) names the message that holds it.
var ErrDuplicate = errors.New("duplicate message")

// DuplicateError names the message that already holds an external id.
type DuplicateError struct {
	Channel, ExternalID, ID string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("store: message %q of %s is already stored (id %s)", e.ExternalID, e.Channel, e.ID)
}

func (e *DuplicateError) Unwrap() error { return ErrDuplicate }

// unheld refuses a message whose external id the channel already holds,
// inside the transaction that would store it, so two writes racing with
// one key store one message.
func unheld(txn *badger.Txn, m *Message) error {
	it, err := txn.Get(externalKey(m.Channel, m.ExternalID))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	held := &DuplicateError{Channel: m.Channel, ExternalID: m.ExternalID}
	_ = it.Value(func(v []byte) error {
		if u, err := uuid.FromBytes(v); err == nil {
			held.ID = u.String()
		}
		return nil
	})
	return held
}

// MaxKeyLen bounds an idempotency key.
const MaxKeyLen = 255

// ValidKey checks an idempotency key: 1–255 bytes of printable UTF-8.
func ValidKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: the idempotency key is empty", ErrInvalid)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: the idempotency key is %d bytes; the limit is %d (a UUID is a good key)", ErrInvalid, len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: the idempotency key is not valid UTF-8", ErrInvalid)
	}
	for _, r := range key {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%w: the idempotency key %q has a character that is not printable", ErrInvalid, key)
		}
	}
	return nil
}

// ImportAnswer is what an import batch did.
type ImportAnswer struct {
	Added   int `json:"added"`
	Skipped int `json:"skipped"`
}

// ImportBatch is Import for one batch of a client's import. A batch named
// by an idempotency key (b.Key) is imported once: the first call imports
// and records its answer in the same transaction; a later call with the
// key imports nothing, posts nothing on the journal and returns the first
// answer (replayed true).
func (s *Store) ImportBatch(msgs []*Message, b Batch) (ans ImportAnswer, added []*Message, replayed bool, err error) {
	if b.Key != "" {
		if err := ValidKey(b.Key); err != nil {
			return ans, nil, false, err
		}
	}
	added, replay, err := s.importBatch(msgs, b)
	switch {
	case err != nil:
		return ans, nil, false, err
	case replay != nil:
		return *replay, nil, true, nil
	}
	return ImportAnswer{Added: len(added), Skipped: len(msgs) - len(added)}, added, false, nil
}

func getImportAnswer(txn *badger.Txn, key string) (ImportAnswer, bool, error) {
	var ans ImportAnswer
	it, err := txn.Get(append([]byte(prefixImportKey), key...))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return ans, false, nil
	}
	if err == nil {
		err = it.Value(func(v []byte) error { return json.Unmarshal(v, &ans) })
	}
	if err != nil {
		return ans, false, fmt.Errorf("store: import key %q: %w", key, err)
	}
	return ans, true, nil
}

func putImportAnswer(txn *badger.Txn, key string, ans ImportAnswer) error {
	b, err := json.Marshal(ans)
	if err != nil {
		return err
	}
	return txn.Set(append([]byte(prefixImportKey), key...), b)
}

// RepliesTo returns what the agent stored in answer to message id of a
// channel, in order: its outgoing messages (the silent choice included)
// and the tool results and notices of the turn. It reads forward from the
// message and stops after scan messages of the channel.
func (s *Store) RepliesTo(channel, id string, scan int) ([]*Message, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a message id", ErrInvalid, id)
	}
	var out []*Message
	err = s.db.View(func(txn *badger.Txn) error {
		prefix := messagePrefix(channel)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 16})
		defer it.Close()
		n := 0
		for it.Seek(append(messageKey(channel, u), 0)); it.Valid() && n < scan; it.Next() {
			n++
			m, err := decodeItem(it.Item())
			if err != nil {
				return err
			}
			if m.ReplyTo == id {
				out = append(out, m)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: replies to %s: %w", id, err)
	}
	return out, nil
}
