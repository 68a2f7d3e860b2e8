package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
)

// Reference prefixes the event log opens (the open tool): "event
// <label>", "theory <title>", "object <name>".
const (
	RefEvent  = "event "
	RefTheory = "theory "
	RefObject = "object "
)

// HistoryRanges numbers runs of a channel's messages as history references
// ("%[history/<channel>/<date>] message n ~ message m"), each run cut into
// the ranges one opening shows whole; a run whose messages are gone has
// none.
type HistoryRanges func(ctx context.Context, channel string, runs []Run) ([][]string, error)

// errNoRef answers a reference the reader may not open as missing, so its
// existence does not leak.
var errNoRef = errors.New("nothing you may open has that name; copy the reference exactly as your prompt shows it")

// Open opens an event, theory or object reference for r: a record's
// level, time and summary (its title) and the history ranges of its
// messages ("%[history/<channel>/<date>] message n ~ message m", which open
// in turn; a rollup's by child record); a theory's current article, or
// the lines of it that location names ("Line 2 ~ Line 4"); an
// object's blocks and relation lines — each only as far as r may read it
// (its infos). What r may read and its audience may not (the owner's, or
// another conversation's, opened in a group) is withheld whole until the
// owner confirms the call (packets.Reader.Withheld).
func (l *Log) Open(ctx context.Context, r packets.Reader, ref, location string) (string, error) {
	switch {
	case strings.HasPrefix(ref, RefEvent):
		return l.openEvent(ctx, r, strings.TrimSpace(ref[len(RefEvent):]))
	case strings.HasPrefix(ref, RefTheory):
		return l.openTheory(r, strings.TrimSpace(ref[len(RefTheory):]), location)
	case strings.HasPrefix(ref, RefObject):
		return l.openObject(r, strings.TrimSpace(ref[len(RefObject):]))
	}
	return "", fmt.Errorf("%%[%s]: %w", ref, errNoRef)
}

func (l *Log) openEvent(ctx context.Context, r packets.Reader, label string) (string, error) {
	all, err := l.labelled(label)
	if err != nil {
		return "", err
	}
	var found []*Event
	withheld := false
	for _, e := range all {
		switch r.Sees(packets.InfoEvents, packets.Scope{Channel: e.Source.Channel}) {
		case packets.Allow:
			found = append(found, e)
		case packets.Confirm:
			withheld = true
		}
	}
	if withheld { // a record of another conversation: none is shown before the owner confirms
		return "", r.Withheld("%[event " + label + "]")
	}
	if len(found) == 0 {
		return "", fmt.Errorf("%%[event %s]: %w", label, errNoRef)
	}
	var b strings.Builder
	for i, e := range found {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if err := l.describe(ctx, &b, r, e); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// maxRangesShown bounds the history ranges one opening of a record lists;
// a wider record's children list theirs.
const maxRangesShown = 60

// describe writes a record as the open tool shows it: what it is, its
// summary (its title), the records it continues, and the history ranges
// of its messages, which open in turn — when r may read that history.
func (l *Log) describe(ctx context.Context, b *strings.Builder, r packets.Reader, e *Event) error {
	fmt.Fprintf(b, "%%[event %s] in %s: %s, %s – %s, %d messages, importance %.2f\n", e.Label, l.escape(e.Source.Channel), levelNoun(e.Level),
		e.Start.In(l.cal.loc).Format("2006-01-02 15:04"), e.End.In(l.cal.loc).Format("2006-01-02 15:04"), e.Messages, e.Importance)
	if e.titled() && e.Title != "" {
		fmt.Fprintf(b, "summary: %s", l.escape(e.Title))
	} else {
		b.WriteString("summary: (not written yet)")
	}
	if e.Level == LevelEvent && len(e.Children) > 0 {
		labels, err := l.labelsOf(e.Children)
		if err != nil {
			return err
		}
		if len(labels) > 0 {
			b.WriteString("\ncontinues: %[event " + strings.Join(labels, "], %[event ") + "]")
		}
	}
	runs, err := l.runs(e)
	if err != nil {
		return err
	}
	switch {
	case len(runs) == 0:
		b.WriteString("\nits messages: none are kept")
		return nil
	case !r.MayRead(packets.InfoHistory, packets.Scope{Channel: e.Source.Channel}):
		b.WriteString("\nits messages: not open to you")
		return nil
	case l.ranges == nil:
		for _, run := range runs {
			fmt.Fprintf(b, "\nmessages %s ~ %s", run.First, run.Last)
		}
		return nil
	}
	ranges, err := l.ranges(ctx, e.Source.Channel, runs)
	if err != nil {
		return fmt.Errorf("events: the messages of %s: %w", e.Label, err)
	}
	if len(runs) == 1 && runs[0].Label == "" {
		b.WriteString("\nits messages (open a range for the words):")
	} else {
		b.WriteString("\nits messages by record (open a range for the words, a record for its summary):")
	}
	shown, left := 0, 0
	for i, run := range runs {
		if i >= len(ranges) || len(ranges[i]) == 0 {
			continue
		}
		if shown >= maxRangesShown {
			left += len(ranges[i])
			continue
		}
		b.WriteString("\n  ")
		if run.Label != "" {
			b.WriteString("%[event " + run.Label + "]: ")
		}
		take := ranges[i][:min(len(ranges[i]), maxRangesShown-shown)]
		b.WriteString(strings.Join(take, ", "))
		shown += len(take)
		left += len(ranges[i]) - len(take)
	}
	switch {
	case shown == 0:
		b.WriteString("\n  (none are kept)")
	case left > 0:
		fmt.Fprintf(b, "\n  … and %d more ranges: open the records above for theirs", left)
	}
	return nil
}

// runs are the messages e stands for: its stored runs, or, for a record
// written before runs were kept, what its source and children say — a
// topic's first and last message; a rollup's children's, each child's
// source (children gone since are left out, and a rollup none of whose
// children is left falls back to its own source).
func (l *Log) runs(e *Event) ([]Run, error) {
	if len(e.Runs) > 0 {
		return e.Runs, nil
	}
	own := []Run{}
	if e.Source.FirstMessageID != "" {
		own = append(own, Run{First: e.Source.FirstMessageID, Last: e.Source.LastMessageID})
	}
	if e.Level == LevelEvent || len(e.Children) == 0 {
		return own, nil
	}
	var out []Run
	err := l.db.View(func(txn *badger.Txn) error {
		for _, id := range e.Children {
			c, err := getEvent(txn, id)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if c.Source.FirstMessageID != "" {
				out = append(out, Run{Label: l.cal.label(c.Level, c.Start), First: c.Source.FirstMessageID, Last: c.Source.LastMessageID})
			}
		}
		return nil
	})
	if err != nil || len(out) == 0 {
		return own, err
	}
	return out, nil
}

// labelsOf are the labels of the records ids names that still exist.
func (l *Log) labelsOf(ids []string) ([]string, error) {
	var out []string
	err := l.db.View(func(txn *badger.Txn) error {
		for _, id := range ids {
			c, err := getEvent(txn, id)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			out = append(out, l.cal.label(c.Level, c.Start))
		}
		return nil
	})
	return out, err
}

// labelled returns the records of every channel whose label is label,
// reading only those whose key has the level and start the label names.
func (l *Log) labelled(label string) ([]*Event, error) {
	level, from, to, ok := l.cal.parseLabel(label)
	if !ok {
		return nil, nil
	}
	now := l.now()
	var out []*Event
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixEvent)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			// … \0 level(1) start(8) id(16)
			if len(k) < 26 || k[len(k)-26] != 0 || k[len(k)-25] != level.code() {
				continue
			}
			if start := timeOfBytes(k[len(k)-24 : len(k)-16]); start.Before(from) || !start.Before(to) {
				continue
			}
			e := new(Event)
			if err := it.Item().Value(func(b []byte) error { return json.Unmarshal(b, e) }); err != nil {
				return fmt.Errorf("decode record %x: %w", k, err)
			}
			if e = l.present(e, now); e.Label == label {
				out = append(out, e)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events: records labelled %s: %w", label, err)
	}
	return out, nil
}

// levelNoun says what a record of level is.
func levelNoun(level Level) string {
	if level == LevelEvent {
		return "a topic"
	}
	return "a " + string(level)
}

// levelOfLabel is the level a label's shape names: "2025年", "2026年1月",
// "20260208-20260214", "20260208", "20260216 3:16" ("" when it is none
// of them).
func levelOfLabel(label string) Level {
	switch {
	case strings.Contains(label, " "):
		return LevelEvent
	case strings.HasSuffix(label, "月"):
		return LevelMonth
	case strings.HasSuffix(label, "年"):
		return LevelYear
	case strings.Contains(label, "-"):
		return LevelWeek
	case len(label) == 8:
		return LevelDay
	}
	return ""
}

func (l *Log) openTheory(r packets.Reader, title, location string) (string, error) {
	from, to, err := theoryLines(location)
	if err != nil {
		return "", fmt.Errorf("%%[theory %s] %s: %w", title, location, err)
	}
	ts, err := l.Theories()
	if err != nil {
		return "", err
	}
	for _, t := range ts {
		if !strings.EqualFold(t.Title, title) && t.ID != title {
			continue
		}
		if r.Sees(packets.InfoTheories, t.ScopeOf()) == packets.Confirm {
			return "", r.Withheld("%[theory " + title + "]")
		}
		if r.MayRead(packets.InfoTheories, t.ScopeOf()) {
			var b strings.Builder
			article := t.Article
			if from > 0 {
				lines := strings.Split(t.Article, "\n")
				if from > len(lines) {
					return "", fmt.Errorf("%%[theory %s] %s: %w: the article has %d lines", title, location, ErrInvalid, len(lines))
				}
				to = min(to, len(lines))
				article = strings.Join(lines[from-1:to], "\n")
				fmt.Fprintf(&b, "theory %s %q, version %d, updated %s, Line %d ~ Line %d of %d\n%s", t.ID, t.Title, t.Version, t.Updated.Format("2006-01-02 15:04"), from, to, len(lines), article)
				return b.String(), nil
			}
			fmt.Fprintf(&b, "theory %s %q, version %d, updated %s\n%s", t.ID, t.Title, t.Version, t.Updated.Format("2006-01-02 15:04"), article)
			for _, ri := range t.RelatedInfo {
				fmt.Fprintf(&b, "\nrelated: %s %s", ri.Kind, ri.Ref)
			}
			return b.String(), nil
		}
	}
	return "", fmt.Errorf("%%[theory %s]: %w", title, errNoRef)
}

// theoryLines reads the line range of a theory's opening ("Line n ~ Line
// m", 1-based); 0, 0 when there is none (the whole article).
func theoryLines(location string) (from, to int, err error) {
	location = strings.TrimSpace(location)
	if location == "" {
		return 0, 0, nil
	}
	from, to, ok := notation.LineRange(location)
	if !ok {
		return 0, 0, fmt.Errorf("%w: a theory opens whole or by \"Line n ~ Line m\"", ErrInvalid)
	}
	if from < 1 || to < from {
		return 0, 0, fmt.Errorf("%w: line range %d ~ %d is empty; lines count from 1 and the end is not before the start", ErrInvalid, from, to)
	}
	return from, to, nil
}

func (l *Log) openObject(r packets.Reader, name string) (string, error) {
	var b strings.Builder
	err := l.db.View(func(txn *badger.Txn) error {
		o, err := lookup(txn, name, "")
		if err != nil {
			return err
		}
		if o == nil && normName(name) == normName(l.agent()) {
			o, _ = getObject(txn, SelfID)
		}
		if o == nil {
			return errNoRef
		}
		fmt.Fprintf(&b, "%s (%s)", l.escape(o.Name), o.Kind)
		if len(o.Aliases) > 0 {
			fmt.Fprintf(&b, ", also %s", l.escape(strings.Join(o.Aliases, ", ")))
		}
		shown := 0
		for _, bl := range o.Blocks {
			if r.Sees(packets.InfoObjects, bl.Provenance.scopeOf()) == packets.Confirm {
				return r.Withheld("%[object " + name + "]")
			}
			if r.MayRead(packets.InfoObjects, bl.Provenance.scopeOf()) {
				fmt.Fprintf(&b, "\n- %s", l.escape(bl.Text))
				shown++
			}
		}
		if shown == 0 {
			b.WriteString("\n(nothing you may see is known of it)")
		}
		if o.ID == SelfID {
			return nil
		}
		rel, err := getRelation(txn, SelfID, o.ID)
		if err != nil {
			return err
		}
		for _, ln := range rel.Lines {
			if ln.Valid && r.Sees(packets.InfoObjects, ln.Source.scopeOf()) == packets.Confirm {
				return r.Withheld("%[object " + name + "]")
			}
			if ln.Valid && r.MayRead(packets.InfoObjects, ln.Source.scopeOf()) {
				fmt.Fprintf(&b, "\n  with me: %s (%.2f)", l.escape(ln.Text), l.decay.At(ln.State, l.now()))
			}
		}
		return nil
	})
	if errors.Is(err, errNoRef) {
		return "", fmt.Errorf("%%[object %s]: %w", name, errNoRef)
	}
	return b.String(), err
}
