package bridge

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/store"
)

// SentLog remembers the outgoing packets a bridge has sent, by the
// router's idempotency key, with the platform's id of each: a packet the
// router offers again after a restart (the daemon stopped between the send
// and its acknowledgement) is acknowledged without being sent twice.
type SentLog interface {
	// Sent reports whether key was sent, and its platform message id.
	Sent(key string) (platformID string, ok bool)
	// MarkSent records that key was sent as platformID.
	MarkSent(key, platformID string) error
}

// sentTTL is how long a sent key is kept: far longer than any packet waits
// in an outbox between its send and its acknowledgement.
const sentTTL = 7 * 24 * time.Hour

// StoreSent is the sent log of one bridge, kept in the store (brg\x00
// sent\x00<bridge>\x00<key> → the platform id), each key for sentTTL.
type StoreSent struct {
	db     *badger.DB
	prefix string
}

// NewStoreSent opens the sent log of the named bridge. It drops the
// arrival cursor an earlier version kept for the bridge.
func NewStoreSent(st *store.Store, bridge string) (*StoreSent, error) {
	s := &StoreSent{db: st.DB(), prefix: store.PrefixBridge + "sent\x00" + bridge + "\x00"}
	err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete([]byte(store.PrefixBridge + "cursor\x00" + bridge)) })
	if err != nil {
		return nil, fmt.Errorf("bridge %s: sent log: %w", bridge, err)
	}
	return s, nil
}

// Sent implements SentLog.
func (s *StoreSent) Sent(key string) (string, bool) {
	var id string
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(s.prefix + key))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error { id = string(v); return nil })
	})
	return id, err == nil
}

// MarkSent implements SentLog.
func (s *StoreSent) MarkSent(key, platformID string) error {
	return s.db.Update(func(txn *badger.Txn) error {
		return txn.SetEntry(badger.NewEntry([]byte(s.prefix+key), []byte(platformID)).WithTTL(sentTTL))
	})
}

// memSent is a sent log in memory, bounded (for tests, and a bridge built
// without a store).
type memSent struct {
	mu   sync.Mutex
	ids  map[string]string
	ring []string
	next int
}

func newMemSent(n int) *memSent { return &memSent{ids: map[string]string{}, ring: make([]string, n)} }

func (m *memSent) Sent(key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.ids[key]
	return id, ok
}

func (m *memSent) MarkSent(key, platformID string) error {
	if key == "" {
		return errors.New("bridge: an empty key")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.ids[key]; !ok {
		if old := m.ring[m.next]; old != "" {
			delete(m.ids, old)
		}
		m.ring[m.next] = key
		m.next = (m.next + 1) % len(m.ring)
	}
	m.ids[key] = platformID
	return nil
}
