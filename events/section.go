package events

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/turn"
)

// SectionQuery is the turn the events section is filled for.
type SectionQuery struct {
	Channel   string
	Speaker   string // who spoke the incoming message
	SpeakerID string // their platform id, when known
	Now       time.Time
	// Reader is the conversation as a reader of knowledge: "who is here"
	// shows only the blocks and lines its prompt may (packets.Reader's
	// InPrompt). A zero Reader sees its conversation's own and the public.
	Reader packets.Reader
}

// reader is q's Reader, or its conversation's own view when none was set.
func (q SectionQuery) reader() packets.Reader {
	if q.Reader.Perm != nil {
		return q.Reader
	}
	return topicReader(packets.Scope{Channel: q.Channel})
}

// recencyHalfLife is how fast the recency term of the selection fades.
const recencyHalfLife = 30 * 24 * time.Hour

// candidates returns the records of a channel that may go into the prompt:
// the most recent remember_* titled records of each level.
func (l *Log) candidates(txn *badger.Txn, channel string) ([]*Event, error) {
	weeks := 0
	if l.cfg.RememberDays > 0 {
		weeks = max(1, l.cfg.RememberDays/7)
	}
	limits := []struct {
		level Level
		n     int
	}{
		{LevelYear, l.cfg.RememberYears}, {LevelMonth, l.cfg.RememberMonths}, {LevelWeek, weeks},
		{LevelDay, l.cfg.RememberDays}, {LevelEvent, l.cfg.RememberEvents},
	}
	var out []*Event
	for _, lim := range limits {
		evs, err := lastEvents(txn, channel, lim.level, lim.n, (*Event).titled)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	return out, nil
}

// score weighs a record for the prompt: its memory R = 0.9^(Δdays/S), its
// recency 2^(−Δt/30 days) and its importance, each by its configured weight.
func (l *Log) score(e *Event, now time.Time) float64 {
	w := l.cfg.Weights
	age := max(now.Sub(e.End), 0)
	recency := math.Exp2(-float64(age) / float64(recencyHalfLife))
	return w.Memory*e.MemoryState.Retrievability(now) + w.Recency*recency + w.Importance*e.Importance
}

// Section fills the events slot: first who is here (the agent's own object,
// the speakers of the open topic, and the lines between them and the agent,
// within events.objects_budget and at most half the section), then the
// records chosen by score within the rest of the budget, rendered in time
// order with the seed's labels, each as the reference that opens it
// ("%[event 20260216 3:16] title": its summary and its messages). Titles, facts and names are escaped.
func (l *Log) Section(_ context.Context, q SectionQuery, budget int, count func(string) int) (turn.Section, error) {
	var sec turn.Section
	var cands []*Event
	var people string
	var peopleItems []packets.SectionItem
	err := l.db.View(func(txn *badger.Txn) error {
		var err error
		if cands, err = l.candidates(txn, q.Channel); err != nil {
			return err
		}
		people, peopleItems, err = l.peopleBlock(txn, q, min(l.cfg.ObjectsBudget, budget/2), count)
		return err
	})
	if err != nil {
		return sec, fmt.Errorf("events: section of %s: %w", q.Channel, err)
	}
	used := count(people)
	left := budget - used
	type scored struct {
		e     *Event
		score float64
		line  string
		n     int
	}
	ss := make([]scored, len(cands))
	for i, e := range cands {
		line := "%[" + RefEvent + l.cal.label(e.Level, e.Start) + "] " + l.escape(e.Title)
		ss[i] = scored{e: e, score: l.score(e, q.Now), line: line}
	}
	slices.SortStableFunc(ss, func(a, b scored) int {
		if c := -cmpFloat(a.score, b.score); c != 0 {
			return c
		}
		return b.e.End.Compare(a.e.End)
	})
	var chosen []scored
	for _, s := range ss {
		s.n = count(s.line) + 1
		item := packets.SectionItem{ID: s.e.ID, Tokens: s.n}
		if s.n <= left {
			left -= s.n
			item.Included = true
			chosen = append(chosen, s)
		} else {
			item.Reason = "over budget"
		}
		sec.Items = append(sec.Items, item)
	}
	slices.SortFunc(chosen, func(a, b scored) int {
		if c := a.e.Start.Compare(b.e.Start); c != 0 {
			return c
		}
		return int(b.e.Level.code()) - int(a.e.Level.code()) // the wider record first
	})
	var b strings.Builder
	for _, s := range chosen {
		b.WriteString(s.line)
		b.WriteByte('\n')
	}
	if people != "" {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(people)
	}
	sec.Body = strings.TrimRight(b.String(), "\n")
	sec.Items = append(sec.Items, peopleItems...)
	sec.Note = fmt.Sprintf("%d of %d records", len(chosen), len(cands))
	return sec, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// peopleBlock renders the agent's object and those of the speakers present,
// with the valid lines between each speaker and the agent, within budget.
func (l *Log) peopleBlock(txn *badger.Txn, q SectionQuery, budget int, count func(string) int) (string, []packets.SectionItem, error) {
	if budget <= 0 {
		return "", nil, nil
	}
	var objs []*Object
	seen := map[string]bool{}
	add := func(o *Object) {
		if o != nil && !seen[o.ID] {
			seen[o.ID] = true
			objs = append(objs, o)
		}
	}
	if self, err := getObject(txn, SelfID); err == nil {
		add(self)
	}
	if o, err := l.person(txn, q.Speaker, q.SpeakerID); err != nil {
		return "", nil, err
	} else {
		add(o)
	}
	var cur cursor
	if _, err := getJSON(txn, cursorKey(q.Channel), &cur); err != nil {
		return "", nil, err
	}
	if cur.Open != nil {
		for _, name := range cur.Open.Speakers {
			o, err := lookup(txn, name, "")
			if err != nil {
				return "", nil, err
			}
			if o != nil && len(o.UserIDs) > 0 {
				continue // known by id: a display name in the topic does not stand for them
			}
			add(o)
		}
	}
	reader := q.reader()
	head := "Who is here:"
	used := count(head) + 1
	var b strings.Builder
	var items []packets.SectionItem
	for _, o := range objs {
		name := l.escape(o.Name)
		if o.ID == SelfID {
			name += " (me)"
		}
		var parts []string
		shown := 0
		for i := len(o.Blocks) - 1; i >= 0; i-- {
			if reader.InPrompt(packets.InfoObjects, o.Blocks[i].Provenance.scopeOf()) {
				parts = append(parts, l.escape(o.Blocks[i].Text))
			}
		}
		shown = len(parts)
		var rel []string
		if o.ID != SelfID {
			r, err := getRelation(txn, SelfID, o.ID)
			if err != nil {
				return "", nil, err
			}
			lines := slices.Clone(r.Lines)
			slices.SortFunc(lines, func(a, b *Line) int { return cmpFloat(l.decay.At(b.State, q.Now), l.decay.At(a.State, q.Now)) })
			for _, ln := range lines {
				if !reader.InPrompt(packets.InfoObjects, ln.Source.scopeOf()) {
					continue
				}
				if w := l.decay.At(ln.State, q.Now); ln.Valid && w >= 0.01 {
					rel = append(rel, fmt.Sprintf("%s (%.2f)", l.escape(ln.Text), w))
				}
			}
		}
		// Fit as many blocks and lines as the budget allows, newest first.
		for len(parts) > 0 || len(rel) > 0 {
			text := name + ": " + strings.Join(parts, "; ")
			if len(rel) > 0 {
				text += "\n  " + name + " & me: " + strings.Join(rel, "; ")
			}
			if n := count(text) + 1; used+n <= budget {
				used += n
				b.WriteString(text)
				b.WriteByte('\n')
				items = append(items, packets.SectionItem{ID: "object:" + o.ID, Tokens: n, Included: true})
				break
			}
			if len(rel) > len(parts) {
				rel = rel[:len(rel)-1]
			} else {
				parts = parts[:len(parts)-1]
			}
		}
		if len(parts) == 0 && len(rel) == 0 && shown > 0 {
			items = append(items, packets.SectionItem{ID: "object:" + o.ID, Reason: "over budget"})
		}
	}
	if b.Len() == 0 {
		return "", items, nil
	}
	return head + "\n" + strings.TrimRight(b.String(), "\n"), items, nil
}
