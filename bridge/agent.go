package bridge

import (
	"context"
	"fmt"
	"time"
)

// Agent is what a bridge needs of the companion. The daemon implements it
// over main-virtual.
type Agent interface {
	// Record stores a message said in a chat without answering it, and
	// returns its stored id. It returns ErrDuplicate when the channel
	// already holds a message with the same ExternalID.
	Record(ctx context.Context, in Inbound) (string, error)
	// Answer runs one turn in a channel over the messages stored so far
	// (the last of them is t.MessageID). The replies reach the chat through
	// the router (Deliver), not through Answer. A *Later error says the
	// turn may not run now (a message limit): the bridge asks again after
	// its wait, for the same askers and whoever addressed it meanwhile.
	Answer(ctx context.Context, t Turn) error
	// Quoted is the platform id of the message an outgoing one (its stored
	// id, the router's Key) quotes — the model's "@last_<name>", which the
	// agent expands into a 「name: …」 quote — when it was said in the same
	// chat ("" when none), so the bridge sends it as a reply to that message.
	Quoted(messageID string) string
	// Note stores a platform line ("^system …") in a channel without a
	// turn: the model reads it at its next turn there.
	Note(ctx context.Context, channel string, kind Kind, text string) error
	// Owner reports whether a speaker id ("qq:12345") is the owner's.
	Owner(speakerID string) bool
	// Answered reports whether a turn already answered the stored message
	// (a reply of the agent, or its choice to say nothing, stored after
	// it), so a turn a restart cut is not run twice.
	Answered(channel, messageID string) bool
}

// Later is an Answer refused for now.
type Later struct {
	After  time.Duration
	Reason string
}

func (e *Later) Error() string { return fmt.Sprintf("not now (%s); again in %s", e.Reason, e.After) }

// Inbound is an incoming message as the bridge stores it.
type Inbound struct {
	Channel    string
	Kind       Kind
	User       string // display name
	UserID     string // "<bridge>:<platform user id>"
	Text       string // rendered: mentions, replies, %[image] refs
	ExternalID string // the platform's message id
	Time       time.Time
}

// Turn asks for one answer in a channel.
type Turn struct {
	Channel   string
	Kind      Kind
	MessageID string // the newest stored message the turn answers
	// Speaker and SpeakerID are whose permissions the turn runs with: of
	// a batch addressed by several people, the least trusted one.
	Speaker   string
	SpeakerID string
}
