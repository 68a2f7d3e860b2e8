package packets

import "time"

// Kinds of a Record.
const (
	RecordEvent  = "event"  // an event record: a topic, a day, week, month or year
	RecordTheory = "theory" // part of a theory article
)

// Record is a text of another kind than a message that a search finds
// beside the chat log (SPEC: recall indexes every stored message, and the
// event and theory texts): an event record's title, a theory's article.
// The event log lists them; the recall index takes them as they are. A hit
// on one is a hit on it: the result carries its kind and id, so a review
// reaches it.
type Record struct {
	Kind string // RecordEvent or RecordTheory
	ID   string // the record's id in the package that keeps it
	// Channel is the conversation it belongs to; "" is every conversation
	// (theories are shared; events are per channel and filtered like
	// messages).
	Channel string
	// OwnerOnly marks the owner's own knowledge (the owner's theories):
	// found in a conversation only by the owner in private; a search of
	// every channel (the owner's API) always finds it.
	OwnerOnly bool
	// Source names it in a result and in the pulled-info area: "event
	// 20260208", "theory <title>".
	Source string
	Text   string
	// Time is when it happened (an event's start) or was last written (a
	// theory); the date filters and "in June 2025" words use it.
	Time time.Time
}
