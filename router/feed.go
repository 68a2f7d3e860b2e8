package router

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
)

// Messages is the store as the feed reads it (*store.Store).
type Messages interface {
	Since(cursor uint64, limit int) ([]*store.Message, uint64, error)
	LastArrival() uint64
}

// ToolSpeak is the tool whose results are speech segments.
const ToolSpeak = "speak"

// PacketOf is the packet a stored message becomes, and whether it is one:
// the agent's outgoing messages with text (not imported history, not a
// silent turn) and the results of the speak tool.
func PacketOf(m *store.Message) (Packet, bool) {
	if m.ExternalID != "" || m.Text == "" || m.Empty {
		return Packet{}, false
	}
	p := Packet{Key: m.ID, Channel: m.Channel, Text: m.Text, Part: m.Part, ReplyTo: m.ReplyTo, Proactive: m.Proactive, Time: m.Time}
	switch {
	case m.Role == store.RoleAssistant && m.Proactive:
		p.Kind = KindProactive
	case m.Role == store.RoleAssistant:
		p.Kind = KindReply
	case m.Role == store.RoleTool && m.ToolName == ToolSpeak:
		speech, ok := packets.ParseSpeech(m.Text)
		if !ok {
			return Packet{}, false
		}
		p.Kind, p.Key, p.Speech = KindSpeech, packets.SpeechKey(m.ID), speech
		var words []string
		for _, s := range speech {
			words = append(words, s.Text)
		}
		p.Text = strings.Join(words, " ")
	default:
		return Packet{}, false
	}
	return p, true
}

// Feed publishes every outgoing message stored from now on, in the order
// they were stored, until ctx ends (then it returns nil). It wakes on the
// journal's message events; its cursor in the store's arrival log is kept
// in the store and moves only after the packets are published, so a
// message stored just before a crash is published after the restart. The
// first run ever starts at the newest message: history is not sent.
func (r *Router) Feed(ctx context.Context, msgs Messages, j *journal.Journal) error {
	var sub *journal.Subscription
	if j != nil {
		sub = j.Subscribe(j.Last(), journal.Filter{Kinds: []journal.Kind{journal.MessageOut, journal.MessageTool}})
	}
	cursor, ok, err := r.cursor()
	if err != nil {
		return err
	}
	if !ok {
		cursor = msgs.LastArrival()
		if err := r.saveCursor(cursor); err != nil {
			return err
		}
	}
	for {
		batch, next, err := msgs.Since(cursor, 500)
		if err != nil {
			return fmt.Errorf("router: feed: %w", err)
		}
		for _, m := range batch {
			if p, ok := PacketOf(m); ok {
				if _, err := r.Publish(p); err != nil {
					return err
				}
			}
		}
		if next != cursor {
			if err := r.saveCursor(next); err != nil {
				return err
			}
			cursor = next
		}
		if len(batch) == 500 {
			continue
		}
		if sub == nil {
			<-ctx.Done()
			return nil
		}
		if _, err := sub.Next(ctx); err != nil {
			if ctx.Err() != nil || errors.Is(err, journal.ErrClosed) {
				return nil
			}
			return err
		}
	}
}

func (r *Router) cursorKey() []byte { return []byte(r.o.Prefix + "c") }

func (r *Router) cursor() (uint64, bool, error) {
	var c uint64
	found := false
	err := r.o.DB.View(func(txn *badger.Txn) error {
		item, err := txn.Get(r.cursorKey())
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		return item.Value(func(v []byte) error { c = binary.BigEndian.Uint64(v); return nil })
	})
	if err != nil {
		return 0, false, fmt.Errorf("router: feed cursor: %w", err)
	}
	return c, found, nil
}

func (r *Router) saveCursor(c uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], c)
	if err := r.o.DB.Update(func(txn *badger.Txn) error { return txn.Set(r.cursorKey(), b[:]) }); err != nil {
		return fmt.Errorf("router: feed cursor: %w", err)
	}
	return nil
}
