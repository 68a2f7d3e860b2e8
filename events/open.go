package events

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/packets"
)

// Reference prefixes the event log opens (the open tool): "event
// <label>", "theory <title>", "object <name>".
const (
	RefEvent  = "event "
	RefTheory = "theory "
	RefObject = "object "
)

// errNoRef answers a reference the reader may not open as missing, so its
// existence does not leak.
var errNoRef = errors.New("nothing you may open has that name; copy the reference exactly as your prompt shows it")

// Open opens an event, theory or object reference for r: a record's
// label, title, time and where its chat log is (then open that history
// range for the words); a theory's current article; an object's blocks
// and relation lines — each only as far as r may read it (its infos).
func (l *Log) Open(_ context.Context, r packets.Reader, ref, _ string) (string, error) {
	switch {
	case strings.HasPrefix(ref, RefEvent):
		return l.openEvent(r, strings.TrimSpace(ref[len(RefEvent):]))
	case strings.HasPrefix(ref, RefTheory):
		return l.openTheory(r, strings.TrimSpace(ref[len(RefTheory):]))
	case strings.HasPrefix(ref, RefObject):
		return l.openObject(r, strings.TrimSpace(ref[len(RefObject):]))
	}
	return "", fmt.Errorf("%%[%s]: %w", ref, errNoRef)
}

func (l *Log) openEvent(r packets.Reader, label string) (string, error) {
	all, err := l.Events(Filter{Limit: 1 << 30}, l.now())
	if err != nil {
		return "", err
	}
	var found []*Event
	for _, e := range all {
		if e.Label == label && r.MayRead(packets.InfoEvents, packets.Scope{Channel: e.Source.Channel}) {
			found = append(found, e)
		}
	}
	if len(found) == 0 {
		return "", fmt.Errorf("%%[event %s]: %w", label, errNoRef)
	}
	var b strings.Builder
	for _, e := range found {
		fmt.Fprintf(&b, "%s %s (%s, %s – %s, %d messages in %s, importance %.2f)\n", e.Label, l.escape(e.Title), e.Level,
			e.Start.Format("2006-01-02 15:04"), e.End.Format("2006-01-02 15:04"), e.Messages, e.Source.Channel, e.Importance)
		if len(e.Children) > 0 {
			fmt.Fprintf(&b, "  includes %d earlier records\n", len(e.Children))
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

func (l *Log) openTheory(r packets.Reader, title string) (string, error) {
	ts, err := l.Theories()
	if err != nil {
		return "", err
	}
	for _, t := range ts {
		if (strings.EqualFold(t.Title, title) || t.ID == title) && r.MayRead(packets.InfoTheories, t.ScopeOf()) {
			var b strings.Builder
			fmt.Fprintf(&b, "theory %s %q, version %d, updated %s\n%s", t.ID, t.Title, t.Version, t.Updated.Format("2006-01-02 15:04"), t.Article)
			for _, ri := range t.RelatedInfo {
				fmt.Fprintf(&b, "\nrelated: %s %s", ri.Kind, ri.Ref)
			}
			return b.String(), nil
		}
	}
	return "", fmt.Errorf("%%[theory %s]: %w", title, errNoRef)
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
