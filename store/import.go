package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/journal"
	"github.com/google/uuid"
)

// MaxExternalIDLen bounds an external id.
const MaxExternalIDLen = 512

// ContentID is the external id given to an imported message that came
// without one: a hash of what it says, who said it, when and where, so that
// importing the same file twice still adds nothing.
func ContentID(m *Message) string {
	h := sha256.New()
	for _, s := range []string{m.Channel, m.Time.UTC().Format(time.RFC3339Nano), string(m.Role), m.User, m.Text} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Import stores historic messages in one durable transaction. Each message
// keeps its own Time (required) and gets an id ordered by that time, so the
// history reads in order beside live messages. A message whose external id
// (ContentID when empty) is already stored in its channel is skipped, which
// makes importing the same history twice add nothing. It returns the
// messages it added.
func (s *Store) Import(msgs []*Message) ([]*Message, error) {
	added, _, err := s.importKeyed(msgs, "")
	return added, err
}

// importKeyed is Import that, when key is set, records the batch's answer
// under that idempotency key in the same transaction (idempotency.go); a
// key already recorded imports nothing and returns the recorded answer.
func (s *Store) importKeyed(msgs []*Message, key string) ([]*Message, *ImportAnswer, error) {
	for i, m := range msgs {
		if err := ValidChannel(m.Channel); err != nil {
			return nil, nil, fmt.Errorf("message %d: %w", i+1, err)
		}
		if m.Time.IsZero() {
			return nil, nil, fmt.Errorf("%w: message %d has no time; imported history needs each message's time", ErrInvalid, i+1)
		}
		switch m.Role {
		case RoleUser, RoleAssistant, RoleTool, RoleSystem:
		case "":
			m.Role = RoleUser
		default:
			return nil, nil, fmt.Errorf("%w: message %d: role %q is not user, assistant, tool or system", ErrInvalid, i+1, m.Role)
		}
		if m.ExternalID == "" {
			m.ExternalID = ContentID(m)
		}
		if len(m.ExternalID) > MaxExternalIDLen {
			return nil, nil, fmt.Errorf("%w: message %d: the external id is %d bytes; the limit is %d", ErrInvalid, i+1, len(m.ExternalID), MaxExternalIDLen)
		}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.guard.check(); err != nil {
		return nil, nil, fmt.Errorf("store: import: %w", err)
	}
	var (
		added  []*Message
		replay *ImportAnswer
	)
	seq := s.seq
	var gen histIDs
	err := s.db.Update(func(txn *badger.Txn) error {
		added, seq = added[:0], s.seq
		if key != "" {
			prev, ok, err := getImportAnswer(txn, key)
			if err != nil || ok {
				replay = &prev
				return err
			}
		}
		seen := make(map[string]bool, len(msgs))
		var put putter
		for _, m := range msgs {
			k := externalKey(m.Channel, m.ExternalID)
			if seen[string(k)] {
				continue
			}
			seen[string(k)] = true
			if _, err := txn.Get(k); err == nil {
				continue
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			m.ID = gen.next(m.Time).String()
			seq++
			if err := put.put(txn, m, seq, true); err != nil { // its external id was looked up just above
				return err
			}
			added = append(added, m)
		}
		if key != "" {
			return putImportAnswer(txn, key, ImportAnswer{Added: len(added), Skipped: len(msgs) - len(added)})
		}
		return nil
	})
	if errors.Is(err, badger.ErrTxnTooBig) && len(msgs) > 1 {
		s.wmu.Unlock()
		a, err1 := s.Import(msgs[:len(msgs)/2])
		b, err2 := s.Import(msgs[len(msgs)/2:])
		if key != "" && err1 == nil && err2 == nil {
			err1 = s.db.Update(func(txn *badger.Txn) error {
				return putImportAnswer(txn, key, ImportAnswer{Added: len(a) + len(b), Skipped: len(msgs) - len(a) - len(b)})
			})
		}
		s.wmu.Lock()
		return append(a, b...), nil, errors.Join(err1, err2)
	}
	if replay != nil && err == nil {
		return nil, replay, nil
	}
	if err == nil {
		err = s.guard.after()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("store: import: %w", err)
	}
	s.seq = seq
	s.noteWrite()
	if len(added) > 0 {
		s.journal.Post(journal.New(journal.MessagesImported, "", journal.Imported{Added: len(added), Skipped: len(msgs) - len(added)}))
	}
	return added, nil, nil
}

// histIDs makes ids for historic messages: uuid v7 from the message's own
// time; messages of one millisecond count up in the order given.
type histIDs struct {
	lastMS int64
	seq    uint16
}

func (g *histIDs) next(t time.Time) uuid.UUID {
	ms := t.UnixMilli()
	if ms == g.lastMS && g.seq < 0x0fff {
		g.seq++
	} else {
		g.lastMS, g.seq = ms, randomSeq()
	}
	return makeV7(ms, g.seq)
}

// LookupExternal returns the id of the message imported with an external
// id into a channel.
func (s *Store) LookupExternal(channel, ext string) (string, error) {
	var id string
	err := s.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(externalKey(channel, ext))
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error {
			u, err := uuid.FromBytes(v)
			id = u.String()
			return err
		})
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return "", fmt.Errorf("store: external id %q in %s: %w", ext, channel, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: lookup external id: %w", err)
	}
	return id, nil
}

// Around returns a channel's messages around one id, oldest first: up to
// before messages older than it, the message itself, and up to after newer
// ones.
func (s *Store) Around(channel, id string, before, after int) ([]*Message, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a message id", ErrInvalid, id)
	}
	var out []*Message
	err = s.db.View(func(txn *badger.Txn) error {
		prefix := messagePrefix(channel)
		var older []*Message
		back := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: prefix, PrefetchValues: before > 0, PrefetchSize: max(before, 1)})
		for back.Seek(messageKey(channel, u)); back.Valid() && len(older) <= before; back.Next() {
			m, err := decodeItem(back.Item())
			if err != nil {
				back.Close()
				return err
			}
			older = append(older, m)
		}
		back.Close()
		if len(older) == 0 || older[0].ID != id {
			return fmt.Errorf("message %s in %s: %w", id, channel, ErrNotFound)
		}
		for i := len(older) - 1; i >= 0; i-- {
			out = append(out, older[i])
		}
		if after <= 0 {
			return nil
		}
		fwd := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: after})
		defer fwd.Close()
		n := 0
		for fwd.Seek(append(messageKey(channel, u), 0)); fwd.Valid() && n < after; fwd.Next() {
			m, err := decodeItem(fwd.Item())
			if err != nil {
				return err
			}
			out = append(out, m)
			n++
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("store: around: %w", err)
		}
		return nil, fmt.Errorf("store: around %s: %w", id, err)
	}
	return out, nil
}

func decodeItem(item *badger.Item) (*Message, error) {
	m := new(Message)
	err := item.Value(func(v []byte) error { return jsonUnmarshal(v, m) })
	if err != nil {
		return nil, fmt.Errorf("decode %x: %w", item.Key(), err)
	}
	return m, nil
}
