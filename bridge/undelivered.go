package bridge

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/store"
)

// Undelivered is a reply the bridge gave up on, or one whose outcome it
// does not know (the model was told either way).
type Undelivered struct {
	Channel string    `json:"channel"`
	Key     string    `json:"key"`
	Text    string    `json:"text"` // its start
	Reason  string    `json:"reason"`
	At      time.Time `json:"at"`
	// Outcome is OutcomeNotDelivered or OutcomeUnknown ("" in entries of
	// earlier versions: not delivered).
	Outcome string `json:"outcome,omitempty"`
}

// The outcomes of a reply the status lists.
const (
	// OutcomeNotDelivered: the platform refused it, or it was given up.
	OutcomeNotDelivered = "not delivered"
	// OutcomeUnknown: the platform took it and never confirmed it; it was
	// not sent again and may show up late.
	OutcomeUnknown = "unknown"
)

// UndeliveredLog keeps the replies a bridge gave up on, across restarts,
// for `cyan bridges`.
type UndeliveredLog interface {
	Add(u Undelivered) error
	// List is the latest maxUndelivered, oldest first.
	List() ([]Undelivered, error)
}

// maxUndelivered is how many given-up replies the status lists;
// undeliveredTTL how long one is kept.
const (
	maxUndelivered = 10
	undeliveredTTL = 7 * 24 * time.Hour
)

// StoreUndelivered is the undelivered log of one bridge in the store
// (brg\x00undelivered\x00<bridge>\x00<time, big-endian> → JSON), each for
// undeliveredTTL.
type StoreUndelivered struct {
	db     *badger.DB
	prefix string
}

// NewStoreUndelivered opens the undelivered log of the named bridge.
func NewStoreUndelivered(st *store.Store, bridge string) *StoreUndelivered {
	return &StoreUndelivered{db: st.DB(), prefix: store.PrefixBridge + "undelivered\x00" + bridge + "\x00"}
}

// Add implements UndeliveredLog.
func (s *StoreUndelivered) Add(u Undelivered) error {
	v, err := json.Marshal(u)
	if err != nil {
		return err
	}
	key := fmt.Sprintf("%s%020d", s.prefix, u.At.UnixNano())
	return s.db.Update(func(txn *badger.Txn) error {
		return txn.SetEntry(badger.NewEntry([]byte(key), v).WithTTL(undeliveredTTL))
	})
}

// List implements UndeliveredLog.
func (s *StoreUndelivered) List() ([]Undelivered, error) {
	var out []Undelivered
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(s.prefix), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var u Undelivered
			if it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &u) }) == nil {
				out = append(out, u)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bridge: undelivered replies: %w", err)
	}
	if len(out) > maxUndelivered {
		out = out[len(out)-maxUndelivered:]
	}
	return out, nil
}

// memUndelivered is an undelivered log in memory.
type memUndelivered struct {
	mu   sync.Mutex
	list []Undelivered
}

func (m *memUndelivered) Add(u Undelivered) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.list = append(m.list, u)
	if len(m.list) > maxUndelivered {
		m.list = m.list[len(m.list)-maxUndelivered:]
	}
	return nil
}

func (m *memUndelivered) List() ([]Undelivered, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Undelivered(nil), m.list...), nil
}

// keepUndelivered records a reply given up; a failure only costs the
// listing (the model was told in the chat).
func (b *Bridge) keepUndelivered(u Undelivered) {
	if err := b.undelivered.Add(u); err != nil {
		b.log.Warn("could not keep an undelivered reply for the status", "channel", u.Channel, "err", err)
	}
}

func (b *Bridge) undeliveredList() []Undelivered {
	l, err := b.undelivered.List()
	if err != nil {
		b.log.Warn("could not list the undelivered replies", "err", err)
	}
	return l
}
