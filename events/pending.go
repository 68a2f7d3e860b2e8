package events

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
)

// maxLogLines bounds the messages read for one writer call; a longer topic
// keeps its first and last ones.
const maxLogLines = 600

// processPending titles and extracts from every record that waits for it,
// oldest first. A failure is kept on the record and retried with backoff.
func (l *Log) processPending(ctx context.Context, now time.Time, ignoreBackoff bool, rep *Report) error {
	var todo []*Event
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixEventPending)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			id, err := uuid.FromBytes(it.Item().Key()[len(store.PrefixEventPending):])
			if err != nil {
				continue
			}
			e, err := getEvent(txn, id.String())
			if err != nil {
				return err
			}
			if e.Pending != nil && (ignoreBackoff || !e.Pending.NextTry.After(now)) {
				todo = append(todo, e)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("events: pending records: %w", err)
	}
	slices.SortFunc(todo, func(a, b *Event) int { return a.Start.Compare(b.Start) })
	for _, e := range todo {
		if ctx.Err() != nil {
			return nil
		}
		step, err := "title", error(nil)
		if e.Pending.Title {
			if err = l.titleEvent(ctx, e, now); err == nil {
				rep.Titled++
			}
		}
		if err == nil && e.Pending != nil && e.Pending.Extract {
			step = "extract"
			if err = l.extractEvent(ctx, e, now); err == nil {
				rep.Extracted++
			}
		}
		if err == nil || ctx.Err() != nil {
			continue
		}
		rep.Failed = append(rep.Failed, fmt.Sprintf("%s %s %s (%s): %v", step, e.Level, l.cal.label(e.Level, e.Start), e.Source.Channel, err))
		if ferr := l.failEvent(e.ID, err, now); ferr != nil {
			return ferr
		}
	}
	return nil
}

// updateEvent re-reads a record under the lock and applies fn to it.
func (l *Log) updateEvent(id string, fn func(txn *badger.Txn, e *Event) error) (*Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out *Event
	err := l.db.Update(func(txn *badger.Txn) error {
		e, err := getEvent(txn, id)
		if err != nil {
			return err
		}
		if err := fn(txn, e); err != nil {
			return err
		}
		out = e
		return putEvent(txn, e)
	})
	return out, err
}

func (l *Log) failEvent(id string, cause error, now time.Time) error {
	_, err := l.updateEvent(id, func(_ *badger.Txn, e *Event) error {
		if e.Pending == nil {
			return nil
		}
		e.Pending.Attempts++
		e.Pending.LastError = cleanText(cause.Error(), 500)
		e.Pending.NextTry = now.Add(retry.Delay(e.Pending.Attempts - 1))
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return nil // replaced meanwhile
	}
	return err
}

// topicLog reads the chat log a record points at.
func (l *Log) topicLog(src Source) (lines []LogLine, omitted int, speakers map[string]string, scope packets.Scope, err error) {
	speakers = map[string]string{}
	agent := l.agent()
	var all []LogLine
	private, owners := true, true // every line private, every person the owner
	err = l.st.Scan(src.Channel, idBefore(src.FirstMessageID), func(m *store.Message) (bool, error) {
		if m.ID > src.LastMessageID {
			return false, nil
		}
		if !m.Conversational() || m.Empty {
			return true, nil
		}
		ll := LogLine{Time: m.Time, Speaker: m.User, Text: m.Text}
		switch m.Role {
		case store.RoleAssistant:
			ll.Speaker, ll.Agent = agent, true
		case store.RoleSystem:
			ll.Speaker = "system"
		default:
			if ll.Speaker == "" {
				ll.Speaker = "user"
			}
			if _, ok := speakers[ll.Speaker]; !ok || m.UserID != "" {
				speakers[ll.Speaker] = m.UserID
			}
			private = private && packets.Private(m.Kind)
			owners = owners && l.isOwner != nil && l.isOwner(m.User, m.UserID, packets.Private(m.Kind))
		}
		all = append(all, ll)
		return true, nil
	})
	if len(all) > maxLogLines {
		head := maxLogLines / 3
		omitted = len(all) - maxLogLines
		all = append(all[:head:head], all[len(all)-(maxLogLines-head):]...)
	}
	scope = packets.Scope{Channel: src.Channel, Owner: private && owners && len(speakers) > 0}
	return all, omitted, speakers, scope, err
}

// titleEvent asks the writer for a topic's title and importance and sets
// its S; the earlier records it continues become its children, and their S
// grows (reviewed as used, D = 0).
func (l *Log) titleEvent(ctx context.Context, e *Event, now time.Time) error {
	lines, omitted, _, _, err := l.topicLog(e.Source)
	if err != nil {
		return err
	}
	if len(lines) == 0 {
		return fmt.Errorf("the messages of %s are gone from the store", e.ID)
	}
	var earlier []EarlierEvent
	err = l.db.View(func(txn *badger.Txn) error {
		prev, err := eventsBefore(txn, e.Source.Channel, LevelEvent, e.Start, 10, (*Event).titled)
		for i := len(prev) - 1; i >= 0; i-- {
			earlier = append(earlier, EarlierEvent{ID: prev[i].ID, Label: l.cal.label(LevelEvent, prev[i].Start), Title: prev[i].Title})
		}
		return err
	})
	if err != nil {
		return err
	}
	out, err := l.w.TitleTopic(ctx, TopicInput{Channel: e.Source.Channel, Agent: l.agent(), Lines: lines, Omitted: omitted, Earlier: earlier, Title: e.Title})
	if err != nil {
		return err
	}
	title := cleanText(out.Title, maxTitleRunes)
	if title == "" {
		return errors.New("the writer gave no title")
	}
	known := map[string]bool{}
	for _, x := range earlier {
		known[x.ID] = true
	}
	_, err = l.updateEvent(e.ID, func(txn *badger.Txn, cur *Event) error {
		if cur.Title == "" {
			cur.Title = title
		}
		cur.Importance = clamp01(out.Importance)
		cur.MemoryState = newMemory(LevelEvent, cur.Importance, cur.End)
		cur.Children = []string{}
		for _, id := range out.Includes {
			if !known[id] || slices.Contains(cur.Children, id) {
				continue
			}
			old, err := getEvent(txn, id)
			if err != nil {
				continue
			}
			old.MemoryState.review(cur.End, 0)
			if err := putEvent(txn, old); err != nil {
				return err
			}
			cur.Children = append(cur.Children, id)
		}
		cur.Pending.Title = false
		cur.Pending.Attempts, cur.Pending.LastError, cur.Pending.NextTry = 0, "", time.Time{}
		if !cur.Pending.Extract {
			cur.Pending = nil
		}
		*e = *cur
		return nil
	})
	return err
}

// extractEvent asks the writer for the facts and relation lines a titled
// topic adds, and adds them, each pointing at the record.
func (l *Log) extractEvent(ctx context.Context, e *Event, now time.Time) error {
	lines, omitted, speakers, scope, err := l.topicLog(e.Source)
	if err != nil {
		return err
	}
	// The extraction sees, and may change, only what the topic's own
	// conversation may see (scope.go).
	reader := topicReader(scope)
	in := ExtractInput{Channel: e.Source.Channel, Agent: l.agent(), Title: e.Title, Lines: lines, Omitted: omitted}
	err = l.db.View(func(txn *badger.Txn) error {
		ids := map[string]bool{SelfID: true}
		names := map[string]string{}
		add := func(o *Object) {
			ids[o.ID] = true
			names[o.ID] = o.Name
			ko := KnownObject{Name: o.Name, Kind: o.Kind}
			var seen []Block
			for _, b := range o.Blocks {
				if reader.InPrompt(packets.InfoObjects, b.Provenance.scopeOf()) {
					seen = append(seen, b)
				}
			}
			for _, b := range seen[max(0, len(seen)-20):] {
				ko.Blocks = append(ko.Blocks, b.Text)
			}
			in.Objects = append(in.Objects, ko)
		}
		if self, err := getObject(txn, SelfID); err == nil {
			add(self)
		}
		for name, uid := range speakers {
			if o, err := l.person(txn, name, uid); err == nil && o != nil && !ids[o.ID] {
				add(o)
			}
		}
		rs, err := relationsOf(txn, ids)
		if err != nil {
			return err
		}
		for _, r := range rs {
			for _, ln := range r.Lines {
				if ln.Valid && names[r.A] != "" && names[r.B] != "" && reader.InPrompt(packets.InfoObjects, ln.Source.scopeOf()) {
					in.Known = append(in.Known, KnownLine{ID: ln.ID, A: names[r.A], B: names[r.B], Text: ln.Text})
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	ex, err := l.w.Extract(ctx, in)
	if err != nil {
		return err
	}
	_, err = l.updateEvent(e.ID, func(txn *badger.Txn, cur *Event) error {
		if err := l.applyExtraction(txn, cur, speakers, scope, ex); err != nil {
			return err
		}
		cur.Pending = nil
		*e = *cur
		return nil
	})
	return err
}

// confirmedID reports whether the owner confirmed a speaker's platform id
// as theirs (permissions.owners names it), so it may join the object of
// the speaker's name.
func (l *Log) confirmedID(name, userID string) bool {
	return userID != "" && l.isOwner != nil && l.isOwner(name, userID, true)
}

// applyExtraction adds what a topic showed: the speakers' objects, new
// blocks, new or reinforced lines, and contradicted lines marked — all of
// the topic's scope; it reinforces or contradicts only lines its
// conversation may see.
func (l *Log) applyExtraction(txn *badger.Txn, e *Event, speakers map[string]string, scope packets.Scope, ex Extraction) error {
	at := e.End
	p := Provenance{By: "extract", Event: e.ID, Channel: e.Source.Channel, Time: at, Scope: &scope}
	reader := topicReader(scope)
	if _, err := l.ensureSelf(txn, at); err != nil {
		return err
	}
	for name, uid := range speakers {
		if _, err := l.ensureObject(txn, name, KindPerson, uid, l.confirmedID(name, uid), at); err != nil {
			return err
		}
	}
	for _, f := range ex.Facts {
		o, err := l.ensureObject(txn, f.Object, kindOf(f.Kind), speakers[f.Object], l.confirmedID(f.Object, speakers[f.Object]), at)
		if err != nil {
			return err
		}
		if _, err := l.addBlock(txn, o, cleanText(f.Text, maxFactRunes), p); err != nil {
			return err
		}
	}
	for _, nl := range ex.Lines {
		a, err := l.ensureObject(txn, nl.A, KindPerson, speakers[nl.A], l.confirmedID(nl.A, speakers[nl.A]), at)
		if err != nil {
			return err
		}
		b, err := l.ensureObject(txn, nl.B, KindPerson, speakers[nl.B], l.confirmedID(nl.B, speakers[nl.B]), at)
		if err != nil || a.ID == b.ID {
			return err
		}
		r, err := getRelation(txn, a.ID, b.ID)
		if err != nil {
			return err
		}
		strength := nl.Strength
		if strength <= 0 {
			strength = 0.3
		}
		l.addLine(r, cleanText(nl.Text, maxFactRunes), strength, p)
		if err := putRelation(txn, r); err != nil {
			return err
		}
	}
	if len(ex.Reinforce)+len(ex.Contradict) == 0 {
		return nil
	}
	rs, err := relationsOf(txn, nil)
	if err != nil {
		return err
	}
	for _, r := range rs {
		changed := false
		for _, ln := range r.Lines {
			if !reader.InPrompt(packets.InfoObjects, ln.Source.scopeOf()) {
				continue
			}
			switch {
			case slices.Contains(ex.Contradict, ln.ID):
				contradict(ln, at)
				changed = true
			case ln.Valid && slices.Contains(ex.Reinforce, ln.ID):
				l.reinforce(ln, 0.2, p)
				changed = true
			}
		}
		if changed {
			if err := putRelation(txn, r); err != nil {
				return err
			}
		}
	}
	return nil
}
