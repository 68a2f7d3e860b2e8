package bridge

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/store"
)

// Writer is a platform account that wrote to the bot privately: what
// `cyan bridges who` lists, so the owner finds their own id.
type Writer struct {
	ID       string    `json:"id"` // the platform user id
	Name     string    `json:"name,omitempty"`
	Username string    `json:"username,omitempty"`
	Last     time.Time `json:"last"`
	// Owner: the account is in permissions.owners already.
	Owner bool `json:"owner"`
	// Line is the permissions.owners entry that names the account.
	Line string `json:"line"`
}

// WhoLog keeps who wrote to a bridge privately, across restarts.
type WhoLog interface {
	Wrote(w Writer) error
	List() ([]Writer, error)
}

// maxWriters bounds the writers listed in the status.
const maxWriters = 50

// StoreWho is the who log of one bridge in the store (brg\x00who\x00
// <bridge>\x00<user id> → the writer as JSON).
type StoreWho struct {
	db     *badger.DB
	prefix string
}

// NewStoreWho opens the who log of the named bridge.
func NewStoreWho(st *store.Store, bridge string) *StoreWho {
	return &StoreWho{db: st.DB(), prefix: store.PrefixBridge + "who\x00" + bridge + "\x00"}
}

// Wrote implements WhoLog.
func (s *StoreWho) Wrote(w Writer) error {
	v, err := json.Marshal(w)
	if err != nil {
		return err
	}
	return s.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(s.prefix+w.ID), v) })
}

// List implements WhoLog: the newest first.
func (s *StoreWho) List() ([]Writer, error) {
	var out []Writer
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(s.prefix), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var w Writer
			if it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &w) }) == nil {
				out = append(out, w)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bridge: private writers: %w", err)
	}
	sortWriters(out)
	return out, nil
}

func sortWriters(ws []Writer) {
	sort.Slice(ws, func(i, j int) bool { return ws[i].Last.After(ws[j].Last) })
}

// memWho is a who log in memory.
type memWho struct {
	mu sync.Mutex
	m  map[string]Writer
}

func (m *memWho) Wrote(w Writer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]Writer{}
	}
	m.m[w.ID] = w
	return nil
}

func (m *memWho) List() ([]Writer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Writer
	for _, w := range m.m {
		out = append(out, w)
	}
	sortWriters(out)
	return out, nil
}

// whoEvery is how often one writer's entry is written again.
const whoEvery = time.Hour

// wrote notes a private message's sender in the who log: a new writer at
// once, a known one at most every whoEvery.
func (b *Bridge) wrote(u User, at time.Time) {
	b.whoMu.Lock()
	last, seen := b.whoSeen[u.ID]
	if seen && at.Sub(last) < whoEvery {
		b.whoMu.Unlock()
		return
	}
	if len(b.whoSeen) > 4096 {
		clear(b.whoSeen)
	}
	b.whoSeen[u.ID] = at
	b.whoMu.Unlock()
	if err := b.who.Wrote(Writer{ID: u.ID, Name: u.Name, Username: u.Username, Last: at}); err != nil {
		b.log.Warn("could not note who wrote privately", "user", u.ID, "err", err)
	}
}

// writers lists who wrote privately, newest first, with whether each is
// the owner and the owners line that would name them.
func (b *Bridge) writers() []Writer {
	list, err := b.who.List()
	if err != nil {
		b.log.Warn("could not list who wrote privately", "err", err)
		return nil
	}
	if len(list) > maxWriters {
		list = list[:maxWriters]
	}
	for i := range list {
		list[i].Line = "id:" + b.speakerID(list[i].ID)
		list[i].Owner = b.agent.Owner(b.speakerID(list[i].ID))
	}
	return list
}
