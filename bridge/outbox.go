package bridge

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
)

// StoreOutbox is an Outbox over the store's arrival log: the outgoing
// messages of a bridge's channels are the agent's stored messages (answers
// and proactive ones) whose channel starts with "<bridge>:", in the order
// they were stored. Its cursor — the last one delivered — is kept in the
// store, so what was not delivered before a restart is delivered after it,
// and nothing twice (unless the daemon stops between a send and its Done).
//
// The first time a bridge runs, its cursor starts at the end of the log:
// it does not replay the history.
type StoreOutbox struct {
	st     *store.Store
	prefix string // "<bridge>:"
	key    []byte

	mu     sync.Mutex
	cursor uint64 // the last delivered (Done)
	read   uint64 // the last read into buf
	buf    []Packet
}

// NewStoreOutbox opens the outbox of the named bridge.
func NewStoreOutbox(st *store.Store, bridge string) (*StoreOutbox, error) {
	o := &StoreOutbox{st: st, prefix: bridge + ":", key: []byte(store.PrefixBridge + "cursor\x00" + bridge)}
	err := st.DB().View(func(txn *badger.Txn) error {
		it, err := txn.Get(o.key)
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("corrupt cursor")
			}
			o.cursor = binary.BigEndian.Uint64(v)
			return nil
		})
	})
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
		o.cursor = st.LastArrival()
		if err := o.save(o.cursor); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("bridge %s: outbox cursor: %w", bridge, err)
	}
	o.read = o.cursor
	return o, nil
}

func (o *StoreOutbox) save(c uint64) error {
	v := binary.BigEndian.AppendUint64(nil, c)
	return o.st.DB().Update(func(txn *badger.Txn) error { return txn.Set(o.key, v) })
}

// outgoing reports whether a stored message is for the bridge's chats.
func (o *StoreOutbox) outgoing(m *store.Message) bool {
	return m.Role == store.RoleAssistant && !m.Empty && strings.TrimSpace(m.Text) != "" && strings.HasPrefix(m.Channel, o.prefix)
}

// fill reads what arrived since the last read. It skips batches that hold
// nothing for the bridge (an import of a million messages passes quickly)
// and reads a batch that does one message at a time, so each packet
// carries its exact arrival cursor. The caller holds o.mu.
func (o *StoreOutbox) fill() error {
	for range 64 {
		msgs, next, err := o.st.Since(o.read, 256)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			o.read = next
			return nil
		}
		if !slices.ContainsFunc(msgs, o.outgoing) {
			o.read = next
			continue
		}
		for range len(msgs) {
			one, at, err := o.st.Since(o.read, 1)
			if err != nil {
				return err
			}
			if len(one) == 0 {
				break
			}
			o.read = at
			if m := one[0]; o.outgoing(m) {
				o.buf = append(o.buf, Packet{Seq: at, ID: m.ID, Channel: m.Channel, Text: m.Text, ReplyTo: m.ReplyTo,
					Step: m.Step, Part: m.Part, Proactive: m.Proactive, Time: m.Time, QuotedID: o.quoted(m)})
			}
			if at >= next {
				break
			}
		}
		if len(o.buf) > 0 {
			return nil
		}
	}
	return nil
}

// quoted is the platform id of the first message m quotes, when it was
// said in the same chat.
func (o *StoreOutbox) quoted(m *store.Message) string {
	if len(m.Quotes) == 0 {
		return ""
	}
	q, err := o.st.Get(m.Quotes[0])
	if err != nil || q.Channel != m.Channel {
		return ""
	}
	return q.ExternalID
}

// Next implements Outbox.
func (o *StoreOutbox) Next(ctx context.Context) (Packet, error) {
	signal, cancel := o.st.Subscribe()
	defer cancel()
	for {
		o.mu.Lock()
		if len(o.buf) == 0 {
			if err := o.fill(); err != nil {
				o.mu.Unlock()
				return Packet{}, err
			}
		}
		if len(o.buf) > 0 {
			p := o.buf[0]
			o.mu.Unlock()
			return p, nil
		}
		o.mu.Unlock()
		select {
		case <-signal:
		case <-ctx.Done():
			return Packet{}, ctx.Err()
		}
	}
}

// Done implements Outbox.
func (o *StoreOutbox) Done(p Packet) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.buf) > 0 && o.buf[0].Seq == p.Seq {
		o.buf = o.buf[1:]
	}
	if p.Seq <= o.cursor {
		return nil
	}
	if err := o.save(p.Seq); err != nil {
		return err
	}
	o.cursor = p.Seq
	return nil
}

// Pending implements Outbox: the packets read and not yet delivered.
func (o *StoreOutbox) Pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.fill()
	return len(o.buf)
}
