package bridge

import (
	"errors"
	"fmt"
	"strconv"
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

// SentIDs is a sent log that can also tell which keys were sent as a
// platform id, and in which chat: a recall notice names only the platform
// id of the bot's message, and the key finds its stored reply; a reply to
// a message names only its id, and whether the bot sent it in that chat
// makes it a reply to the bot. StoreSent keeps this across a restart;
// memSent only in memory.
type SentIDs interface {
	// MarkSentIn is MarkSent for a message sent in channel (the bridge's
	// channel of its chat), which the reverse index keeps.
	MarkSentIn(channel, key, platformID string) error
	// SentAs lists the keys sent as platformID (a platform id may recur
	// across chats: each key's stored reply names its chat), none when
	// none was.
	SentAs(platformID string) ([]string, error)
	// SentIn reports whether platformID was sent in channel (marked by
	// MarkSentIn).
	SentIn(channel, platformID string) (bool, error)
}

// Flights remembers the sends under way — begun, their outcome not yet
// recorded — across a restart. A send a crash cut (the daemon died after
// writing the message to the platform, before its answer) leaves its
// flight; when the router offers its packet again, the bridge looks for
// it in the chat (Finder) rather than send it a second time blind, and
// where the platform cannot be searched (Telegram's bots read no
// history) its outcome is unknown: not sent again, the model told. A
// graceful stop leaves none: a begun send runs to its end (Bridge.send).
// The bridge also keeps a flight on purpose, for a send the adapter could
// not look for without a connection (SendError.Unlooked): the packet's
// next offer looks for it over the next one. StoreSent keeps them; the
// in-memory log does not, nothing of it surviving a restart.
type Flights interface {
	// Begin records that key's send begins at at.
	Begin(key string, at time.Time) error
	// Begun reports when key's send began, if its outcome was never
	// recorded: MarkSent, or End, forgets the flight.
	Begun(key string) (time.Time, bool)
	// End forgets key's flight: the platform refused the message, nothing
	// was posted.
	End(key string) error
}

// sentTTL is how long a sent key is kept: far longer than any packet waits
// in an outbox between its send and its acknowledgement.
const sentTTL = 7 * 24 * time.Hour

// StoreSent is the sent log of one bridge, kept in the store (brg\x00
// sent\x00<bridge>\x00<key> → the platform id), each key for sentTTL,
// with its Flights (brg\x00flight\x00<bridge>\x00<key> → when the send
// began, Unix milliseconds, for as long), which MarkSent ends in its own
// transaction.
// With a platform id, MarkSent also writes, in the same transaction, the
// reverse index brg\x00own\x00<bridge>\x00<platform id>\x00<key> → the
// channel it was sent in ("" when MarkSent was not told) for as long,
// which SentAs and SentIn read by prefix: a recall of the bot's message
// finds its key, and a reply to it is known as one, after a restart too.
// Platform ids hold no NUL (QQ's are numbers, Telegram's too), so the
// prefix of one id is never the prefix of another's.
type StoreSent struct {
	db     *badger.DB
	prefix string
	own    string // the reverse index's prefix
	flight string // the flights' prefix
}

// NewStoreSent opens the sent log of the named bridge. It drops the
// arrival cursor an earlier version kept for the bridge.
func NewStoreSent(st *store.Store, bridge string) (*StoreSent, error) {
	s := &StoreSent{db: st.DB(), prefix: store.PrefixBridge + "sent\x00" + bridge + "\x00",
		own: store.PrefixBridge + "own\x00" + bridge + "\x00", flight: store.PrefixBridge + "flight\x00" + bridge + "\x00"}
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
func (s *StoreSent) MarkSent(key, platformID string) error { return s.MarkSentIn("", key, platformID) }

// MarkSentIn implements SentIDs.
func (s *StoreSent) MarkSentIn(channel, key, platformID string) error {
	return s.db.Update(func(txn *badger.Txn) error {
		if err := txn.SetEntry(badger.NewEntry([]byte(s.prefix+key), []byte(platformID)).WithTTL(sentTTL)); err != nil {
			return err
		}
		if _, err := txn.Get([]byte(s.flight + key)); err == nil {
			if err := txn.Delete([]byte(s.flight + key)); err != nil {
				return err
			}
		}
		if platformID == "" {
			return nil
		}
		return txn.SetEntry(badger.NewEntry([]byte(s.own+platformID+"\x00"+key), []byte(channel)).WithTTL(sentTTL))
	})
}

// Begin implements Flights.
func (s *StoreSent) Begin(key string, at time.Time) error {
	return s.db.Update(func(txn *badger.Txn) error {
		v := strconv.AppendInt(nil, at.UnixMilli(), 10)
		return txn.SetEntry(badger.NewEntry([]byte(s.flight+key), v).WithTTL(sentTTL))
	})
}

// Begun implements Flights. A flight unread (the store failing) is taken
// as none: the send goes as it would have without flights.
func (s *StoreSent) Begun(key string) (time.Time, bool) {
	var ms int64
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(s.flight + key))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			ms, err = strconv.ParseInt(string(v), 10, 64)
			return err
		})
	})
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// End implements Flights.
func (s *StoreSent) End(key string) error {
	return s.db.Update(func(txn *badger.Txn) error { return txn.Delete([]byte(s.flight + key)) })
}

// SentAs implements SentIDs: the keys in the order of the index (by key).
func (s *StoreSent) SentAs(platformID string) ([]string, error) {
	var keys []string
	err := s.each(platformID, func(key, _ string) bool { keys = append(keys, key); return true })
	return keys, err
}

// SentIn implements SentIDs.
func (s *StoreSent) SentIn(channel, platformID string) (bool, error) {
	found := false
	err := s.each(platformID, func(_, ch string) bool { found = ch == channel; return !found })
	return found && channel != "", err
}

// each calls f with the key and channel of each entry of platformID in
// the reverse index, while f returns true.
func (s *StoreSent) each(platformID string, f func(key, channel string) bool) error {
	if platformID == "" {
		return nil
	}
	prefix := []byte(s.own + platformID + "\x00")
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			var ch string
			if err := item.Value(func(v []byte) error { ch = string(v); return nil }); err != nil {
				return err
			}
			if !f(string(item.Key()[len(prefix):]), ch) {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sent log: the keys of %s: %w", platformID, err)
	}
	return nil
}

// noFlights are the Flights of a sent log that keeps none: a restart
// forgets every send under way with the log itself.
type noFlights struct{}

func (noFlights) Begin(string, time.Time) error  { return nil }
func (noFlights) Begun(string) (time.Time, bool) { return time.Time{}, false }
func (noFlights) End(string) error               { return nil }

// memSent is a sent log in memory, bounded (for tests, and a bridge built
// without a store), with its reverse index (SentIDs) bounded alike.
type memSent struct {
	mu   sync.Mutex
	ids  map[string]string
	ring []string
	next int
	own  ownSent
}

func newMemSent(n int) *memSent { return &memSent{ids: map[string]string{}, ring: make([]string, n)} }

// SentAs implements SentIDs: the keys in the order they were marked.
func (m *memSent) SentAs(platformID string) ([]string, error) { return m.own.keys(platformID), nil }

// SentIn implements SentIDs.
func (m *memSent) SentIn(channel, platformID string) (bool, error) {
	return m.own.in(channel, platformID), nil
}

func (m *memSent) MarkSent(key, platformID string) error { return m.MarkSentIn("", key, platformID) }

func (m *memSent) Sent(key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.ids[key]
	return id, ok
}

// MarkSentIn implements SentIDs.
func (m *memSent) MarkSentIn(channel, key, platformID string) error {
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
	if platformID != "" {
		m.own.add(platformID, key, channel)
	}
	return nil
}
