package turn

import (
	"errors"
	"fmt"

	"github.com/cyan-agent/cyan/store"
)

// Incoming is a message that starts a turn.
type Incoming struct {
	Channel string
	User    string // the speaker's display name
	UserID  string // the speaker's platform id, when known
	// Kind is "private" (the default) or "group".
	Kind string
	Text string
	// NoGreeting keeps a new channel from opening with the persona's
	// greeting (the OpenAI-compatible endpoint's front-end shows its own).
	NoGreeting bool
}

// Conversation kinds.
const (
	KindPrivate = "private"
	KindGroup   = "group"
)

// Listener follows a turn as it happens. Every field may be nil.
type Listener struct {
	// Stored is called once the incoming message is durable.
	Stored func(*store.Message)
	// Stream receives the live text of each model output ("@br" as Break,
	// markers removed). Setting it makes the turn stream from the provider.
	Stream func(StreamEvent) error
	// Reply is called for each outgoing message once it is durable, before
	// any tool of that answer runs.
	Reply func(*store.Message)
}

// Result is a finished turn.
type Result struct {
	Message *store.Message   // the incoming message as stored
	Replies []*store.Message // the outgoing messages, in order ([] for silence)
	Trace   *Trace
	// Usage is what the model reported of its workspace use.
	Usage Usage
	// Greeting is the persona's greeting when the message opened its
	// channel; it is also the first of Replies.
	Greeting *store.Message
	// Err is set when a step after the first failed: the replies before it
	// were delivered, the rest of the turn was not.
	Err error
	// Replayed: the message was stored by an earlier call with the same
	// idempotency key, and these are the replies stored then (TurnOnce).
	Replayed bool
}

// TurnError is a turn that could not answer. Message is the incoming
// message when it was stored before the failure (it always is, unless the
// failure was in storing it).
type TurnError struct {
	Stage   string // "store", "assemble" or "llm"
	Message *store.Message
	Err     error
}

func (e *TurnError) Error() string {
	return fmt.Sprintf("mainvirtual: %s: %v", e.Stage, e.Err)
}

func (e *TurnError) Unwrap() error { return e.Err }

// MaxTextBytes bounds an incoming message's text.
const MaxTextBytes = 256 << 10

// IsInvalid reports whether err is a rejected input (a 400 for callers).
func IsInvalid(err error) bool { return errors.Is(err, store.ErrInvalid) }

// StreamEvent is what a live reader of the model's output sees: text to
// show, or a break between two outgoing messages (only ever between two
// texts), or Cut: the model's output ended before its finish (the server
// stopped mid-answer); what was shown is stored marked incomplete, and Cut
// says why.
type StreamEvent struct {
	Text  string
	Break bool
	Cut   string
}

// TextLimit is the limit-process on one model output's text as it is
// written (limitproc.Holdback): Write takes the next piece of a message and
// returns what may go out now, End closes the message and returns what it
// still held. Every outgoing text passes it once: what it released is what
// the stream shows and what is stored.
type TextLimit interface {
	Write(s string) string
	End() string
	// Parts is how many messages may still go out (-1: no limit).
	Parts() int
}
