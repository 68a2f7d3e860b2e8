package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/skl"

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

// Import stores historic messages durably: in one transaction when the
// batch fits Badger's limit, else in as few as it allows (importChunks),
// all synced before it returns. Each message
// keeps its own Time (required) and gets an id ordered by that time, so the
// history reads in order beside live messages. A message whose external id
// (ContentID when empty) is already stored in its channel is skipped, which
// makes importing the same history twice add nothing. It returns the
// messages it added. The journal hears of the batch (MessagesImported).
func (s *Store) Import(msgs []*Message) ([]*Message, error) {
	added, _, err := s.importBatch(msgs, Batch{})
	return added, err
}

// importBatch is Import that, when b.Key is set, records the batch's
// answer under that idempotency key in the same transaction
// (idempotency.go); a key already recorded imports nothing and returns the
// recorded answer.
func (s *Store) importBatch(msgs []*Message, b Batch) ([]*Message, *ImportAnswer, error) {
	key := b.Key
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
	added, replay, err := s.importChunks(msgs, key)
	if replay != nil && err == nil {
		return nil, replay, nil
	}
	if err == nil {
		err = s.guard.after()
	}
	if err != nil && len(added) == 0 {
		return nil, nil, fmt.Errorf("store: import: %w", err)
	}
	// Parts committed before a failure stay (a retry skips them by external
	// id), so they are told like any others; a failed batch is not the
	// import's last.
	s.noteWrite()
	if len(msgs) > 0 {
		s.journal.Post(journal.New(journal.MessagesImported, "", journal.Imported{Added: len(added), Skipped: len(msgs) - len(added),
			Spans: spansOf(msgs), Final: b.Final && err == nil}))
	}
	if err != nil {
		return added, nil, fmt.Errorf("store: import: %w", err)
	}
	return added, nil, nil
}

// Batch says what a batch of an import is: its idempotency key ("": none),
// and whether it is the import's last (the journal's MessagesImported
// says so, for the parts that work on a whole import).
type Batch struct {
	Key   string
	Final bool
}

// spansOf is, per channel in order of first appearance, the times of the
// first and last of msgs.
func spansOf(msgs []*Message) []journal.Span {
	var out []journal.Span
	at := map[string]int{}
	for _, m := range msgs {
		i, ok := at[m.Channel]
		if !ok {
			at[m.Channel], i = len(out), len(out)
			out = append(out, journal.Span{Channel: m.Channel, From: m.Time, To: m.Time})
		}
		if m.Time.Before(out[i].From) {
			out[i].From = m.Time
		}
		if m.Time.After(out[i].To) {
			out[i].To = m.Time
		}
	}
	return out
}

// importChunks writes an import's new messages in as few durable
// transactions as Badger's transaction limit allows: one when the batch
// fits (all or nothing), else a run of full ones. The messages are looked
// up and encoded by workers ahead of it (import_prepare.go); each
// transaction is committed while the next is being filled (at most one in
// flight), so the preparing, the filling, and Badger's write and sync use
// every core; it returns once every transaction it committed is synced,
// with the messages they added. When a transaction fails, the ones before
// it stay (a retry skips their messages by external id) and none after it
// is committed. With key set, the answer is recorded in the last
// transaction, committed only after all the others succeeded. The caller
// holds wmu.
func (s *Store) importChunks(msgs []*Message, key string) (added []*Message, replay *ImportAnswer, err error) {
	maxSize := s.db.Opts().MemTableSize * 15 / 100 // Badger's largest batch (db.go)
	p := putter{maxSize: maxSize * 9 / 10, maxCount: maxSize / int64(skl.MaxNodeSize) * 9 / 10, arrivals: new(arrivalBatch)}
	var (
		gen     histIDs
		seq     = s.seq
		seen    = make(map[string]bool, len(msgs))
		flying  chan error // the commit in flight
		flyAdds []*Message
		flySeq  uint64
	)
	land := func() error { // waits for the commit in flight
		if flying == nil {
			return nil
		}
		err := <-flying
		flying = nil
		if err == nil {
			added = append(added, flyAdds...)
			s.seq = flySeq
		}
		return err
	}
	txn := s.db.NewTransaction(true)
	defer func() { txn.Discard() }()
	// The first transaction records the format its arrival batches need
	// (a commit that fails leaves the record unwritten, and none after it
	// is committed).
	if err := s.useFormat(txn, formatBatches); err != nil {
		return nil, nil, err
	}
	defer func() {
		if len(added) > 0 {
			s.format = max(s.format, formatBatches)
		}
	}()
	if key != "" {
		prev, ok, err := getImportAnswer(txn, key)
		if err != nil || ok {
			return nil, &prev, err
		}
	}
	prep := s.prepare(msgs)
	defer prep.close()
	var chunk []*Message
	for b := 0; b*prepBlock < len(msgs); b++ {
		ready, err := prep.block(b)
		if err != nil {
			return added, nil, errors.Join(err, land())
		}
		for j := 0; j < len(ready); j++ {
			m, r := msgs[b*prepBlock+j], &ready[j]
			if r.stored || seen[string(r.ext)] {
				seen[string(r.ext)] = true
				continue
			}
			id := gen.next(m.Time)
			m.ID = id.String()
			copy(r.val[idAt:], m.ID)
			err := p.putEncoded(txn, m, id, r.val, r.ext, seq+1)
			if errors.Is(err, errTxnFull) {
				// Commit this transaction once the one before it has
				// landed, and go on with m in a new one.
				if err := land(); err != nil {
					return added, nil, err
				}
				if err := p.putArrivals(txn, seq); err != nil {
					return added, nil, err
				}
				flying, flyAdds, flySeq = make(chan error, 1), chunk, seq
				full := txn
				full.CommitWith(func(err error) { flying <- err })
				txn, chunk = s.db.NewTransaction(true), nil
				p.fresh()
				j--
				continue
			}
			if err != nil {
				return added, nil, errors.Join(err, land())
			}
			seen[string(r.ext)] = true
			seq++
			chunk = append(chunk, m)
		}
	}
	if err := land(); err != nil {
		return added, nil, err
	}
	if err := p.putArrivals(txn, seq); err != nil {
		return added, nil, err
	}
	if key != "" {
		if err := putImportAnswer(txn, key, ImportAnswer{Added: len(added) + len(chunk), Skipped: len(msgs) - len(added) - len(chunk)}); err != nil {
			return added, nil, err
		}
	}
	if err := txn.Commit(); err != nil {
		return added, nil, err
	}
	s.seq = seq
	return append(added, chunk...), nil, nil
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
