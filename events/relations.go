package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
)

// Relation is what links two objects, split into lines (one aspect each),
// each with its own memory state. A is the smaller object id.
type Relation struct {
	A     string  `json:"a"`
	B     string  `json:"b"`
	AName string  `json:"a_name,omitempty"` // filled when read
	BName string  `json:"b_name,omitempty"`
	Lines []*Line `json:"lines"`
}

// Line is one aspect of a relation. A line the conversation contradicts is
// marked no longer valid, with the time, and kept.
type Line struct {
	ID           string     `json:"id"`
	Text         string     `json:"text"`
	State        LineState  `json:"state"`
	Weight       float64    `json:"weight"` // at the time it was read
	Valid        bool       `json:"valid"`
	InvalidSince *time.Time `json:"invalid_since,omitempty"`
	Source       Provenance `json:"source"`
	// ReinforcedBy are the records that showed the line again (the newest
	// 20).
	ReinforcedBy []string  `json:"reinforced_by,omitempty"`
	Created      time.Time `json:"created"`
}

const maxReinforcedBy = 20

func pair(a, b string) (string, string) {
	if a > b {
		return b, a
	}
	return a, b
}

func getRelation(txn *badger.Txn, a, b string) (*Relation, error) {
	a, b = pair(a, b)
	r := &Relation{A: a, B: b, Lines: []*Line{}}
	if _, err := getJSON(txn, relationKey(a, b), r); err != nil {
		return nil, err
	}
	return r, nil
}

func putRelation(txn *badger.Txn, r *Relation) error {
	c := *r
	c.AName, c.BName = "", ""
	lines := make([]*Line, len(r.Lines))
	for i, ln := range r.Lines {
		x := *ln
		x.Weight = 0
		lines[i] = &x
	}
	c.Lines = lines
	return setJSON(txn, relationKey(c.A, c.B), &c)
}

// addLine adds a line, or grows the valid line of the same text.
func (l *Log) addLine(r *Relation, text string, strength float64, p Provenance) *Line {
	for _, ln := range r.Lines {
		if ln.Valid && normName(ln.Text) == normName(text) {
			l.reinforce(ln, strength, p)
			return ln
		}
	}
	ln := &Line{ID: shortID("ln", r.A, r.B, text), Text: text, Valid: true, Source: p, Created: p.Time}
	ln.State = l.decay.Grow(LineState{}, p.Time, strength)
	r.Lines = append(r.Lines, ln)
	return ln
}

func (l *Log) reinforce(ln *Line, strength float64, p Provenance) {
	ln.State = l.decay.Grow(ln.State, p.Time, strength)
	if p.Event != "" && !slices.Contains(ln.ReinforcedBy, p.Event) {
		ln.ReinforcedBy = append(ln.ReinforcedBy, p.Event)
		if len(ln.ReinforcedBy) > maxReinforcedBy {
			ln.ReinforcedBy = ln.ReinforcedBy[1:]
		}
	}
}

// contradict marks a line no longer valid at t.
func contradict(ln *Line, t time.Time) {
	if ln.Valid {
		ln.Valid = false
		ln.InvalidSince = &t
	}
}

// relationsOf returns every relation one of ids takes part in.
func relationsOf(txn *badger.Txn, ids map[string]bool) ([]*Relation, error) {
	var out []*Relation
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixRelation), PrefetchValues: true})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		k := it.Item().Key()[len(store.PrefixRelation):]
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			continue
		}
		if ids != nil && !ids[string(k[:i])] && !ids[string(k[i+1:])] {
			continue
		}
		r := new(Relation)
		if err := it.Item().Value(func(b []byte) error { return json.Unmarshal(b, r) }); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Relations lists every relation with its lines' weights as of now and the
// names of both objects.
func (l *Log) Relations(now time.Time) ([]*Relation, error) {
	var out []*Relation
	err := l.db.View(func(txn *badger.Txn) error {
		rs, err := relationsOf(txn, nil)
		if err != nil {
			return err
		}
		names := map[string]string{}
		name := func(id string) string {
			if n, ok := names[id]; ok {
				return n
			}
			n := id
			if o, err := getObject(txn, id); err == nil {
				n = o.Name
			}
			names[id] = n
			return n
		}
		for _, r := range rs {
			r.AName, r.BName = name(r.A), name(r.B)
			for _, ln := range r.Lines {
				ln.Weight = l.decay.At(ln.State, now)
			}
		}
		out = rs
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events: relations: %w", err)
	}
	return out, nil
}
