package events

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
)

// Object kinds.
const (
	KindPerson = "person"
	KindAgent  = "agent"
	KindThing  = "thing"
)

// SelfID is the id of the agent's own object, which always exists.
const SelfID = "self"

// maxBlocks bounds the blocks of one object; past it new facts are not
// added (and the log says so), since blocks are never deleted.
const maxBlocks = 500

// Object is a person, an agent or a thing the agent knows about. Its info is
// kept in blocks: unrelated facts are separate blocks, each with where it
// came from.
type Object struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	Name    string    `json:"name"`
	Aliases []string  `json:"aliases,omitempty"`  // other names it went by
	UserIDs []string  `json:"user_ids,omitempty"` // platform ids of a person
	Blocks  []Block   `json:"blocks"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// Block is one piece of info about an object.
type Block struct {
	ID         string     `json:"id"`
	Text       string     `json:"text"`
	Provenance Provenance `json:"provenance"`
}

// Provenance says where a block or a line came from.
type Provenance struct {
	By      string    `json:"by"`              // "extract" (from a topic) or "agent"
	Event   string    `json:"event,omitempty"` // the source record
	Channel string    `json:"channel,omitempty"`
	Time    time.Time `json:"time"`
	// Scope is whose knowledge it is (scope.go); nil for what was kept
	// before scopes existed: then its channel's.
	Scope *packets.Scope `json:"scope,omitempty"`
	// ConfirmedAt is when the owner confirmed it (ConfirmBlock).
	ConfirmedAt *time.Time `json:"confirmed_at,omitempty"`
}

// agentObject makes sure the agent's own object exists under its current
// name.
func (l *Log) agentObject(now time.Time) (*Object, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var o *Object
	err := l.db.Update(func(txn *badger.Txn) error {
		var err error
		o, err = l.ensureSelf(txn, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("events: agent object: %w", err)
	}
	return o, nil
}

func (l *Log) ensureSelf(txn *badger.Txn, now time.Time) (*Object, error) {
	name := strings.TrimSpace(l.agent())
	o := new(Object)
	found, err := getJSON(txn, objectKey(SelfID), o)
	if err != nil {
		return nil, err
	}
	if !found {
		o = &Object{ID: SelfID, Kind: KindAgent, Name: name, Blocks: []Block{}, Created: now, Updated: now}
	} else if o.Name == name {
		return o, nil
	} else {
		if o.Name != "" && !slices.Contains(o.Aliases, o.Name) {
			o.Aliases = append(o.Aliases, o.Name)
		}
		o.Name, o.Updated = name, now
	}
	if err := setJSON(txn, objectKey(SelfID), o); err != nil {
		return nil, err
	}
	return o, txn.Set(nameKey(name), []byte(SelfID))
}

func getObject(txn *badger.Txn, id string) (*Object, error) {
	o := new(Object)
	found, err := getJSON(txn, objectKey(id), o)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("object %s: %w", id, ErrNotFound)
	}
	return o, nil
}

// lookup finds an object: by platform id when one is given (only by it: a
// display name anyone can copy never stands for a known id), else by name.
func lookup(txn *badger.Txn, name, userID string) (*Object, error) {
	k := nameKey(name)
	switch {
	case userID != "":
		k = userKey(userID)
	case name == "":
		return nil, nil
	}
	it, err := txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	id, err := it.ValueCopy(nil)
	if err != nil {
		return nil, err
	}
	return getObject(txn, string(id))
}

// person finds a speaker's object: by their id, or by name when the id is
// the owner's confirmed one (confirmedID) or there is no id.
func (l *Log) person(txn *badger.Txn, name, userID string) (*Object, error) {
	o, err := lookup(txn, name, userID)
	if o == nil && err == nil && l.confirmedID(name, userID) {
		return lookup(txn, name, "")
	}
	return o, err
}

// ensureObject finds or makes the object a name (and platform id) stands
// for. A person seen under a new name keeps the old one as an alias.
//
// A platform id is attached to a person only by the id itself or the
// owner's confirmation, never by a matching display name: a speaker with
// an id the log has not seen gets an object of their own (the name's
// object keeps its name), unless confirmed is set — the owner named the id
// in permissions.owners, so the owner's object found by name is theirs.
func (l *Log) ensureObject(txn *badger.Txn, name, kind, userID string, confirmed bool, now time.Time) (*Object, error) {
	name = cleanText(name, maxNameRunes)
	if name == "" {
		return nil, fmt.Errorf("%w: an object needs a name", ErrInvalid)
	}
	if normName(name) == normName(l.agent()) {
		return l.ensureSelf(txn, now)
	}
	o, err := lookup(txn, name, userID)
	if o == nil && err == nil && userID != "" && confirmed {
		o, err = lookup(txn, name, "")
	}
	if err != nil {
		return nil, err
	}
	changed := false
	if o == nil {
		id, _ := uuid.NewV7()
		o = &Object{ID: id.String(), Kind: kind, Name: name, Blocks: []Block{}, Created: now, Updated: now}
		changed = true
	}
	if normName(o.Name) != normName(name) && !slices.ContainsFunc(o.Aliases, func(a string) bool { return normName(a) == normName(name) }) {
		o.Aliases = append(o.Aliases, name)
		changed = true
	}
	if userID != "" && !slices.Contains(o.UserIDs, userID) {
		o.UserIDs = append(o.UserIDs, userID)
		changed = true
	}
	if !changed {
		return o, nil
	}
	o.Updated = now
	if err := setJSON(txn, objectKey(o.ID), o); err != nil {
		return nil, err
	}
	if held, err := lookup(txn, name, ""); err != nil {
		return nil, err
	} else if held == nil || held.ID == o.ID {
		// The name leads to its first holder; a second person of the same
		// name is found by their id.
		if err := txn.Set(nameKey(name), []byte(o.ID)); err != nil {
			return nil, err
		}
	}
	if userID != "" {
		return o, txn.Set(userKey(userID), []byte(o.ID))
	}
	return o, nil
}

// addBlock adds a fact to an object unless it already holds it.
func (l *Log) addBlock(txn *badger.Txn, o *Object, text string, p Provenance) (bool, error) {
	for _, b := range o.Blocks {
		if normName(b.Text) == normName(text) {
			return false, nil
		}
	}
	if len(o.Blocks) >= maxBlocks {
		l.log.Warn("object has too many blocks; fact not added", "object", o.Name, "limit", maxBlocks)
		return false, nil
	}
	o.Blocks = append(o.Blocks, Block{ID: fmt.Sprintf("b%d", len(o.Blocks)+1), Text: text, Provenance: p})
	o.Updated = p.Time
	return true, setJSON(txn, objectKey(o.ID), o)
}

// Objects lists every object, the agent's own first, then by name.
func (l *Log) Objects() ([]*Object, error) {
	var out []*Object
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixObject), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			o := new(Object)
			if err := it.Item().Value(func(b []byte) error { return json.Unmarshal(b, o) }); err != nil {
				return err
			}
			out = append(out, o)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events: objects: %w", err)
	}
	slices.SortFunc(out, func(a, b *Object) int {
		switch {
		case a.ID == SelfID:
			return -1
		case b.ID == SelfID:
			return 1
		}
		return strings.Compare(normName(a.Name), normName(b.Name))
	})
	return out, nil
}

// shortID makes a short, stable id from parts (relation lines are referred
// to by models, which copy short ids more reliably).
func shortID(prefix string, parts ...string) string {
	h := sha1.Sum([]byte(strings.Join(parts, "\x00")))
	return prefix + hex.EncodeToString(h[:5])
}
