package events

import (
	"context"
	"time"
)

// Kinds of a searchable record (Record.Kind).
const (
	RecordEvent  = "event"
	RecordTheory = "theory"
)

// Record is a piece of the log a search index takes (package recall reads
// it as its own Record, field for field): what it says, where it is found
// and when it happened.
type Record struct {
	Kind string // RecordEvent or RecordTheory
	ID   string
	// Channel is the conversation it is found in; "" is every one.
	Channel string
	// OwnerOnly marks the owner's own knowledge: found in a conversation
	// only by the owner in private.
	OwnerOnly bool
	// Source names it in a result and in the pulled-info area: "event
	// <label>", "theory <title>".
	Source string
	Text   string
	// Time is an event's start, or when a theory was last written.
	Time time.Time
}

// Records lists every record a search finds, now: every titled event (its
// title, under "event <label>", in its channel) and every theory (its
// article, under "theory <title>", found where its scope says: public
// ones everywhere, a conversation's there, the owner's by the owner in
// private).
func (l *Log) Records(context.Context) ([]Record, error) {
	evs, err := l.Titled(l.now())
	if err != nil {
		return nil, err
	}
	ths, err := l.Theories()
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(evs)+len(ths))
	for _, ev := range evs {
		out = append(out, Record{Kind: RecordEvent, ID: ev.ID, Channel: ev.Source.Channel,
			Source: "event " + ev.Label, Text: ev.Title, Time: ev.Start})
	}
	for _, th := range ths {
		s := th.ScopeOf()
		out = append(out, Record{Kind: RecordTheory, ID: th.ID, Channel: s.Channel, OwnerOnly: s.Owner,
			Source: "theory " + th.Title, Text: th.Article, Time: th.Updated})
	}
	return out, nil
}
