package bridge

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/store"
)

// OwedTurn is a turn a chat is owed: its newest message addressed to the
// companion (a private message, a mention, a reply to it) waits for an
// answer. It is kept until that turn ends, so a turn a restart cut runs
// when the bridge starts again.
type OwedTurn struct {
	Channel   string    `json:"channel"`
	MessageID string    `json:"message_id"` // the stored id
	Speaker   string    `json:"speaker"`
	SpeakerID string    `json:"speaker_id"`
	At        time.Time `json:"at"` // when it was said
}

// OwedLog keeps the owed turns of one bridge across restarts, one a chat
// (the newest).
type OwedLog interface {
	// Owe records t as its chat's owed turn, replacing an older one.
	Owe(t OwedTurn) error
	// Paid forgets the chat's owed turn if it is still messageID's (a newer
	// message owed meanwhile stays owed).
	Paid(channel, messageID string) error
	// List is every owed turn, oldest first.
	List() ([]OwedTurn, error)
}

// DefaultResumeMaxAge is how old an owed turn may be and still run when
// the bridge starts (config bridges.resume_max_age).
const DefaultResumeMaxAge = 30 * time.Minute

// owedTTL bounds how long an owed turn is kept at all.
const owedTTL = 7 * 24 * time.Hour

// StoreOwed is the owed log of one bridge in the store (brg\x00owed\x00
// <bridge>\x00<channel> → the turn as JSON), each for owedTTL.
type StoreOwed struct {
	db     *badger.DB
	prefix string
}

// NewStoreOwed opens the owed log of the named bridge.
func NewStoreOwed(st *store.Store, bridge string) *StoreOwed {
	return &StoreOwed{db: st.DB(), prefix: store.PrefixBridge + "owed\x00" + bridge + "\x00"}
}

// Owe implements OwedLog.
func (s *StoreOwed) Owe(t OwedTurn) error {
	v, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return s.db.Update(func(txn *badger.Txn) error {
		return txn.SetEntry(badger.NewEntry([]byte(s.prefix+t.Channel), v).WithTTL(owedTTL))
	})
}

// Paid implements OwedLog.
func (s *StoreOwed) Paid(channel, messageID string) error {
	return s.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(s.prefix + channel))
		if err == badger.ErrKeyNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		var t OwedTurn
		if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &t) }); err != nil || t.MessageID == messageID {
			return txn.Delete([]byte(s.prefix + channel))
		}
		return nil
	})
}

// List implements OwedLog.
func (s *StoreOwed) List() ([]OwedTurn, error) {
	var out []OwedTurn
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(s.prefix), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var t OwedTurn
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &t) }); err != nil {
				continue // a damaged entry owes nothing
			}
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bridge: owed turns: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// memOwed is an owed log in memory (tests, a bridge without a store).
type memOwed struct {
	mu sync.Mutex
	m  map[string]OwedTurn
}

func newMemOwed() *memOwed { return &memOwed{m: map[string]OwedTurn{}} }

func (m *memOwed) Owe(t OwedTurn) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[t.Channel] = t
	return nil
}

func (m *memOwed) Paid(channel, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m[channel].MessageID == id {
		delete(m.m, channel)
	}
	return nil
}

func (m *memOwed) List() ([]OwedTurn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []OwedTurn
	for _, t := range m.m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// owe records a chat's owed turn; a failure only costs the resume.
func (b *Bridge) owe(t OwedTurn) {
	if err := b.owed.Owe(t); err != nil {
		b.log.Warn("could not keep an owed turn; a restart before it is answered would leave it unanswered", "channel", t.Channel, "err", err)
	}
}

// paid forgets a chat's owed turn once the turn that answers it ended.
func (b *Bridge) paid(channel, id string) {
	if id == "" {
		return
	}
	if err := b.owed.Paid(channel, id); err != nil {
		b.log.Warn("could not forget an answered turn; a restart may look at it again", "channel", channel, "err", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stale = slices.DeleteFunc(b.stale, func(t OwedTurn) bool { return t.Channel == channel })
}

// resume runs, once, the turns a restart cut: each chat's owed turn whose
// message has no answer yet and is at most ResumeMaxAge old. Older ones
// are listed in the status (Stale) and left owed until the chat's next
// turn. Answered ones are forgotten.
func (b *Bridge) resume() {
	list, err := b.owed.List()
	if err != nil {
		b.log.Warn("could not read the owed turns; turns cut by the restart are not resumed", "err", err)
		return
	}
	now := b.clock.Now()
	var stale []OwedTurn
	for _, t := range list {
		chat, ok := ParseChannel(b.name, t.Channel)
		if !ok {
			b.paid(t.Channel, t.MessageID)
			continue
		}
		if b.agent.Answered(t.Channel, t.MessageID) {
			b.paid(t.Channel, t.MessageID)
			continue
		}
		if b.resumeMaxAge >= 0 && now.Sub(t.At) > b.resumeMaxAge {
			stale = append(stale, t)
			continue
		}
		b.log.Info("a turn cut by the restart runs now", "channel", t.Channel, "message", t.MessageID, "said", t.At)
		b.mu.Lock()
		cs := b.chat(chat)
		if cs.last == "" {
			cs.last = t.MessageID
		}
		cs.owed = t.MessageID
		if len(cs.pending) == 0 {
			cs.first = now
		}
		cs.pending = append(cs.pending, asker{name: t.Speaker, id: t.SpeakerID, why: "resume", at: now})
		if !cs.running {
			b.schedule(cs, now)
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	b.stale = stale
	b.mu.Unlock()
}
