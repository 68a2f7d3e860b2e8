package events

import (
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/packets"
)

// Scopes of the event log's knowledge (packets.Scope). What a topic shows
// — the facts and relation lines the extraction finds — belongs to the
// topic's conversation: a group's to that group, a private chat's to it,
// and the owner's own private chats' to the owner. So a stranger's
// claims in a group ("the owner's password is …", "I am the owner's boss")
// are shown only in that group's prompts; they reach the owner's private
// prompt only when the owner confirms them (ConfirmBlock), which makes
// them the owner's. An extraction reads and reinforces or contradicts only
// what its conversation may see, so a group can neither learn the owner's
// private facts through it nor wear down the owner's relation lines.
//
// Theories are written by whoever holds the right (self_edit
// "theories:…"): the owner's theories are the owner's knowledge; the
// agent's in a conversation belong to that conversation.

// scopeOf is where a block or line came from: its scope when it was kept,
// else (written before scopes existed) the conversation it came from.
func (p Provenance) scopeOf() packets.Scope {
	if p.Scope != nil {
		return *p.Scope
	}
	return packets.Scope{Channel: p.Channel}
}

// ScopeOf is where a theory belongs; a theory written before scopes
// existed is the owner's.
func (t *Theory) ScopeOf() packets.Scope {
	if t.Scope != nil {
		return *t.Scope
	}
	return packets.Scope{Owner: true}
}

// topicReader is a topic's conversation as a reader of knowledge: what its
// extraction may see and change.
func topicReader(s packets.Scope) packets.Reader {
	return packets.Reader{Channel: s.Channel, Owner: s.Owner, Private: s.Owner,
		Perm: &packets.Permission{Infos: []string{"*:own", "*:owner", "*:public"}}}
}

// ConfirmBlock makes an info block the owner's knowledge: the owner
// vouches for what a conversation said, and from then on it is shown in
// the owner's private prompts too.
func (l *Log) ConfirmBlock(objectID, blockID string, now time.Time) (*Block, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out *Block
	err := l.db.Update(func(txn *badger.Txn) error {
		o, err := getObject(txn, objectID)
		if err != nil {
			return err
		}
		for i := range o.Blocks {
			b := &o.Blocks[i]
			if b.ID != blockID {
				continue
			}
			s := b.Provenance.scopeOf()
			s.Owner = true
			b.Provenance.Scope = &s
			b.Provenance.ConfirmedAt = &now
			o.Updated = now
			cp := *b
			out = &cp
			return setJSON(txn, objectKey(o.ID), o)
		}
		return fmt.Errorf("object %s has no block %q: %w", objectID, blockID, ErrNotFound)
	})
	if err != nil {
		return nil, fmt.Errorf("events: confirm: %w", err)
	}
	return out, nil
}
