package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AuthError is a connection the platform refused for its credentials (a
// wrong access token): the bridge is tried again, slowly, and its state
// says "failed: <Setting>" until a connection proves healthy.
type AuthError struct {
	// Setting names what to correct ("wrong access_token").
	Setting string
	// Why is the evidence (a 1403 frame, an HTTP 401, quick closes).
	Why string
	// Fix says where to set it.
	Fix string
}

func (e *AuthError) Error() string {
	s := e.Setting + ": " + e.Why
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// IsAuth reports whether err is an *AuthError.
func IsAuth(err error) bool {
	var a *AuthError
	return errors.As(err, &a)
}

// Noticer is what a Sink offers beyond messages, for the platforms that
// report recalls and pokes (OneBot's group_recall, friend_recall and
// notify/poke notices). The bridge's sink implements it; an adapter checks
// with a type assertion.
//
// Telegram's Bot API has no update for a deleted message (bots are never
// told of deletions), so the Telegram adapter never calls Recalled.
type Noticer interface {
	// Recalled reports that a message of the chat was withdrawn.
	Recalled(ctx context.Context, chat Chat, msgID string)
	// Poked reports that from poked (nudged) the bot in the chat.
	Poked(ctx context.Context, chat Chat, from User, at time.Time)
}

// Pusher is implemented by adapters whose platform pushes events without
// waiting for an acknowledgement (OneBot): Inbound may then return before
// the message is stored, so a message whose media is slow never holds up
// the ones after it. An adapter that confirms what it received (Telegram's
// getUpdates offset) does not implement it: its messages are stored before
// Inbound returns.
type Pusher interface {
	PushesWithoutAck() bool
}

// Recaller is the optional part of an Agent that marks a stored message
// recalled by its platform id: it leaves every prompt and recall result
// and stays in the store marked so. ErrNotStored: no such message (yet).
type Recaller interface {
	Recall(ctx context.Context, channel, externalID string) error
}

// ErrNotStored is a recall of a message the channel does not hold.
var ErrNotStored = errors.New("bridge: no such message stored")

// Quote is a stored message as a reply shows it.
type Quote struct {
	User string
	Time time.Time
	Text string
}

// Quoter is the optional part of an Agent that finds a stored message of a
// channel by its platform id, so a reply reaches the model with who said
// what it answers.
type Quoter interface {
	Quote(channel, externalID string) (Quote, bool)
}

func authState(err error) string {
	var a *AuthError
	if errors.As(err, &a) {
		return fmt.Sprintf("failed: %s", a.Setting)
	}
	return ""
}
