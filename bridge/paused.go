package bridge

import (
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/store"
)

// PauseLog keeps the chats whose owner paused unasked speech (/pause)
// across restarts.
type PauseLog interface {
	// SetPaused records a chat's channel as paused (on) or not.
	SetPaused(channel string, on bool) error
	// Paused lists the paused channels.
	Paused() ([]string, error)
}

// StorePaused is the pause log of one bridge in the store (brg\x00
// paused\x00<bridge>\x00<channel> → nothing).
type StorePaused struct {
	db     *badger.DB
	prefix string
}

// NewStorePaused opens the pause log of the named bridge.
func NewStorePaused(st *store.Store, bridge string) *StorePaused {
	return &StorePaused{db: st.DB(), prefix: store.PrefixBridge + "paused\x00" + bridge + "\x00"}
}

// SetPaused implements PauseLog.
func (s *StorePaused) SetPaused(channel string, on bool) error {
	return s.db.Update(func(txn *badger.Txn) error {
		if on {
			return txn.Set([]byte(s.prefix+channel), nil)
		}
		return txn.Delete([]byte(s.prefix + channel))
	})
}

// Paused implements PauseLog.
func (s *StorePaused) Paused() ([]string, error) {
	var out []string
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(s.prefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			out = append(out, string(it.Item().Key()[len(s.prefix):]))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bridge: paused chats: %w", err)
	}
	return out, nil
}

// loadPaused reads the paused chats of the log at start.
func (b *Bridge) loadPaused() {
	if b.pauseLog == nil {
		return
	}
	chans, err := b.pauseLog.Paused()
	if err != nil {
		b.log.Warn("could not read the paused chats; none is paused", "err", err)
		return
	}
	for _, ch := range chans {
		if c, ok := ParseChannel(b.name, ch); ok {
			b.paused.set(c, true)
		}
	}
}

// setPaused pauses or resumes a chat, durably when there is a log.
func (b *Bridge) setPaused(c Chat, on bool) {
	b.paused.set(c, on)
	if b.pauseLog != nil {
		if err := b.pauseLog.SetPaused(c.Channel(b.name), on); err != nil {
			b.log.Warn("could not keep the pause of a chat; a restart forgets it", "channel", c.Channel(b.name), "err", err)
		}
	}
}
