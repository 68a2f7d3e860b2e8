package mainvirtual

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// Chat bridges keep every message of a group but answer only some: Record
// stores a message without a turn, Respond runs a turn over what is stored,
// and Note stores a line from the platform.

// ErrDuplicate is a recorded message whose external id the channel
// already holds.
var ErrDuplicate = errors.New("mainvirtual: duplicate message")

// Recorded is an incoming message to store without answering it.
type Recorded struct {
	turn.Incoming
	// ExternalID is the platform's id of the message; a second message
	// with the same one in the channel is refused with ErrDuplicate.
	ExternalID string
	// Time is when it was said (zero: now).
	Time time.Time
}

// Record stores an incoming message without a turn. It is on the journal
// (journal.MessageIn) as every stored message is, so the observers hear of
// it as of any incoming message. A channel that holds nothing yet opens
// with the persona's greeting, stored first, as a turn's does.
func (mv *MainVirtual) Record(ctx context.Context, in Recorded) (*store.Message, error) {
	if err := mv.check(&in.Incoming); err != nil {
		return nil, err
	}
	if in.ExternalID != "" {
		if _, err := mv.store.LookupExternal(in.Channel, in.ExternalID); err == nil {
			return nil, ErrDuplicate
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, &turn.TurnError{Stage: "store", Err: err}
		}
	}
	now := mv.now()
	msg := &store.Message{Channel: in.Channel, Role: store.RoleUser, User: in.User, UserID: in.UserID, Kind: in.Kind,
		Text: in.Text, Tokens: mv.count.Count(in.Text), ExternalID: in.ExternalID}
	if !in.Time.IsZero() && in.Time.Before(now) {
		msg.Time = in.Time
	}
	msgs := []*store.Message{msg}
	if mv.greeting != nil && !in.NoGreeting {
		// The check for an empty channel and the greeting's store are one
		// step, so two first messages do not both open it.
		mv.greetMu.Lock()
		defer mv.greetMu.Unlock()
		q := turn.Query{Channel: in.Channel, Speaker: in.User, SpeakerID: in.UserID, Kind: in.Kind, Now: now}
		if g := mv.greetingFor(q, false); g != nil {
			msgs = []*store.Message{g, msg}
		}
	}
	if err := mv.store.Append(now, msgs...); err != nil {
		if errors.Is(err, store.ErrDuplicate) { // stored since the look-up: the store refuses it whole
			return nil, ErrDuplicate
		}
		return nil, &turn.TurnError{Stage: "store", Err: err}
	}
	return msg, nil
}

// Respond runs a turn in a channel over the messages stored so far,
// answering the stored message messageID (the newest one the caller knows
// of). The speaker is whose permissions the turn has.
func (mv *MainVirtual) Respond(ctx context.Context, channel, messageID, speaker, speakerID, kind string, l turn.Listener) (*turn.Result, error) {
	if err := store.ValidChannel(channel); err != nil {
		return nil, err
	}
	msg, err := mv.store.Get(messageID)
	if err != nil {
		return nil, &turn.TurnError{Stage: "store", Err: err}
	}
	if msg.Channel != channel {
		return nil, fmt.Errorf("%w: message %s is not in channel %s", store.ErrInvalid, messageID, channel)
	}
	if kind == "" {
		kind = turn.KindPrivate
	}
	unlock := mv.locks.lock(channel)
	defer unlock()
	q := turn.Query{Channel: channel, Speaker: speaker, SpeakerID: speakerID, Kind: kind, MessageID: msg.ID, Now: mv.now()}
	if mv.limits != nil {
		if wait, reason := mv.limits.Admit(q); wait > 0 {
			return nil, &turn.Limited{Message: msg, RetryAfter: wait, Reason: reason}
		}
	}
	return mv.run(ctx, msg, q, l, nil)
}

// Note stores a line from the platform ("^system …") in a channel without
// a turn: the model reads it at its next turn there.
func (mv *MainVirtual) Note(ctx context.Context, channel, kind, text string) error {
	if err := store.ValidChannel(channel); err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("%w: an empty note", store.ErrInvalid)
	}
	if kind == "" {
		kind = turn.KindPrivate
	}
	msg := &store.Message{Channel: channel, Role: store.RoleSystem, User: "system", Kind: kind, Text: text, Tokens: mv.count.Count(text)}
	return mv.store.Append(mv.now(), msg)
}

// check validates and completes an incoming message.
func (mv *MainVirtual) check(in *turn.Incoming) error {
	if err := store.ValidChannel(in.Channel); err != nil {
		return err
	}
	if strings.TrimSpace(in.Text) == "" {
		return fmt.Errorf("%w: the message text is empty", store.ErrInvalid)
	}
	if len(in.Text) > turn.MaxTextBytes {
		return fmt.Errorf("%w: the message is %d bytes; the limit is %d (send a file reference instead)", store.ErrInvalid, len(in.Text), turn.MaxTextBytes)
	}
	if in.User == "" {
		in.User = "user"
	}
	switch in.Kind {
	case "":
		in.Kind = turn.KindPrivate
	case turn.KindPrivate, turn.KindGroup:
	default:
		return fmt.Errorf("%w: kind %q is neither %q nor %q", store.ErrInvalid, in.Kind, turn.KindPrivate, turn.KindGroup)
	}
	return nil
}

// Greet opens an empty channel with the persona's greeting, as a page does
// when it is opened, before anyone speaks: the greeting is stored (so it is
// delivered, shown and voiced) once. It returns nil when the channel holds
// messages already, or the persona has no greeting for it.
func (mv *MainVirtual) Greet(ctx context.Context, channel, user, kind string) (*store.Message, error) {
	if err := store.ValidChannel(channel); err != nil {
		return nil, err
	}
	switch kind {
	case "":
		kind = turn.KindPrivate
	case turn.KindPrivate, turn.KindGroup:
	default:
		return nil, fmt.Errorf("%w: kind %q is neither %q nor %q", store.ErrInvalid, kind, turn.KindPrivate, turn.KindGroup)
	}
	if mv.greeting == nil {
		return nil, nil
	}
	unlock := mv.locks.lock(channel)
	defer unlock()
	mv.greetMu.Lock() // Record's check-and-store is under it alone
	defer mv.greetMu.Unlock()
	now := mv.now()
	g := mv.greetingFor(turn.Query{Channel: channel, Speaker: user, Kind: kind, Now: now}, false)
	if g == nil {
		return nil, nil
	}
	if err := mv.store.Append(now, g); err != nil {
		return nil, &turn.TurnError{Stage: "store", Err: err}
	}
	return g, nil
}
