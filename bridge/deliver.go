package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/router"
)

// maxTries bounds the offers of one message that fail with a temporary
// platform error; after the last one it is given up and the model told.
const maxTries = 6

var _ router.Component = (*Bridge)(nil)

// Deliver is the bridge as the router's component: it sends one outgoing
// packet of its channels. The router offers the packets of the bridge's
// outbox in order per chat (router.AttachLanes, a lane per channel: one
// chat's waits never hold up another's), and offers a packet again (after
// a backoff, before any later one of its chat) while Deliver returns a
// temporary error, so order holds and nothing is lost while the platform
// is away:
//
//   - it waits, blocked, while the adapter is disconnected;
//   - a packet already sent (its Key is in the sent log: the daemon
//     stopped between the send and the acknowledgement) is acknowledged
//     without sending it again;
//   - a packet whose send was cut before the platform answered (by a
//     crash, or a connection gone: its flight left, Flights) is looked for
//     in the chat first (Finder): found, it is not sent again; where the
//     platform cannot be searched its outcome is unknown;
//   - it waits while the bot is muted in the chat (a group_ban notice for
//     the bot, a send refused as muted): nothing is sent into the chat
//     until the mute is lifted or ends; an answer held longer than
//     MuteHoldMax is given up, listed with why;
//   - the parts of one answer are sent with a short human-like pause;
//   - a part longer than the platform takes is sent as several messages
//     (sendPieces), and one the platform refuses as too long is split
//     again, never dropped;
//   - a send the platform never confirmed (SendError.Unknown: written, no
//     answer, and the adapter could not find it in the chat) is not sent
//     again: the status counts it as unknown and the model is told it may
//     not have arrived; one the adapter could not look for, having no
//     connection (SendError.Unlooked), is looked for over the next one
//     when the adapter can (canLook), until the last offer;
//   - a chat the platform moved (SendError.MovedTo) keeps its channel and
//     the message goes to the new id; a reply the platform refuses
//     (SendError.ReplyRefused) goes again without the reply;
//   - a temporary platform error (rate limited, a send the adapter found
//     was not posted) is returned, so the router tries again, after the
//     platform's retry-after when it gave one; after maxTries, or on a
//     permanent error (the chat is gone), the model is told in that chat
//     (a note it reads at its next turn there), the status lists it
//     (Undelivered) and the packet is dropped (router.Permanent).
//
// In a voiced chat the answer's voice message follows its text, or
// replaces it (voice.go). Speech packets are not the chat's: they are
// acknowledged unsent.
func (b *Bridge) Deliver(ctx context.Context, d router.Delivery) error {
	if d.Kind == router.KindSpeech {
		return nil
	}
	chat, ok := ParseChannel(b.name, d.Channel)
	if !ok {
		b.log.Warn("an outgoing message for a channel that is no chat of this bridge; dropped", "channel", d.Channel, "key", d.Key)
		return nil
	}
	if id, ok := b.keys.Sent(d.Key); ok {
		if id != "" {
			b.sent.add(string(chat.Kind) + ":" + chat.ID + ":" + id)
		}
		b.log.Info("an outgoing message was sent before a restart; not sent again", "channel", d.Channel, "key", d.Key)
		return nil
	}
	out := parseOutgoing(d.Text, chat, &b.roster)
	if q := b.agent.Quoted(d.Key); q != "" && !SyntheticID(q) {
		out = asReply(out, q)
	}
	if len(out.Parts) == 0 {
		return nil
	}
	if d.Attempt == 1 && b.follows(d.Packet) {
		if clock.Sleep(ctx, b.clock, replyDelay(b.manners, d.Text)) != nil {
			return ctx.Err()
		}
	}
	o := offer{attempt: d.Attempt}
	var err error
	var id string
	var began time.Time
	for {
		if err = b.holdWhileMuted(ctx, chat, d.Time); err != nil {
			break
		}
		began = b.clock.Now()
		if b.voiceMode == VoiceOnly && b.voicedChat(chat) {
			id, err = b.voiceInstead(ctx, chat, d.Key, out, &o)
		} else {
			id, err = b.sendPieces(ctx, chat, d.Key, out, b.limit, 0, &o)
		}
		var se *SendError
		if errors.As(err, &se) && se.Muted && ctx.Err() == nil {
			b.mutes.set(chat, b.clock.Now(), se.Until, se.Msg)
			b.log.Info("the platform refused a send as muted; the chat's answers wait", "channel", d.Channel, "until", se.Until, "err", err)
			continue
		}
		break
	}
	if err == nil {
		b.mutes.proved(chat, began)
		if kerr := b.keys.MarkSentIn(chat.Channel(b.name), d.Key, id); kerr != nil {
			b.log.Warn("could not keep the sent message's key; a restart before its acknowledgement would send it again", "key", d.Key, "err", kerr)
		}
		b.mu.Lock()
		b.prev[d.Channel] = d.Packet
		b.mu.Unlock()
		if (b.voiceMode == "" || b.voiceMode == VoiceBoth) && b.voicedChat(chat) {
			b.followVoice(chat, d.Key, out)
		}
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err() // still due: offered again after the restart
	}
	var se *SendError
	if errors.As(err, &se) && se.Temporary {
		if d.Attempt < maxTries || o.progress > 0 {
			// (pieces sent in this offer: the platform takes them, slowly)
			b.log.Info("send failed; the router tries again", "channel", d.Channel, "key", d.Key, "attempt", d.Attempt, "err", err)
			if se.RetryAfter > 0 && clock.Sleep(ctx, b.clock, se.RetryAfter) != nil {
				return ctx.Err()
			}
			return err
		}
		err = fmt.Errorf("gave up after %d tries: %w", d.Attempt, err)
	}
	b.failed.Add(1)
	b.log.Warn("reply not delivered", "channel", d.Channel, "key", d.Key, "err", err)
	b.keepUndelivered(Undelivered{Channel: d.Channel, Key: d.Key, Text: short(d.Text, 80), Reason: err.Error(), Outcome: OutcomeNotDelivered, At: b.clock.Now()})
	note := fmt.Sprintf("your message %q could not be delivered to this chat: %v", short(d.Text, 60), err)
	if nerr := b.agent.Note(ctx, d.Channel, chat.Kind, note); nerr != nil {
		b.log.Warn("could not note the failed delivery", "channel", d.Channel, "err", nerr)
	}
	return router.Permanent(err)
}

// unconfirmed records a message (or piece, under key) the platform took
// and never confirmed: its key is kept as sent, so it is never sent again;
// the status lists it as unknown and the model is told it may not have
// arrived.
func (b *Bridge) unconfirmed(ctx context.Context, chat Chat, key string, out Outgoing, err error) {
	if kerr := b.keys.MarkSent(key, ""); kerr != nil {
		b.log.Warn("could not keep an unconfirmed message's key; a restart would send it again", "key", key, "err", kerr)
	}
	b.unknown.Add(1)
	channel := chat.Channel(b.name)
	text := out.Text()
	b.log.Warn("the platform did not confirm a message; not sent again", "channel", channel, "key", key, "err", err)
	b.keepUndelivered(Undelivered{Channel: channel, Key: key, Text: short(text, 80), Reason: err.Error(), Outcome: OutcomeUnknown, At: b.clock.Now()})
	note := fmt.Sprintf("your message %q may not have reached this chat: the platform took it but never confirmed it (%v); it was not sent again, so it may show up late or not at all", short(text, 60), err)
	if nerr := b.agent.Note(ctx, channel, chat.Kind, note); nerr != nil {
		b.log.Warn("could not note the unconfirmed delivery", "channel", channel, "err", nerr)
	}
}

// sendPieces sends out split to the limit, in order, each piece its own
// delivery under its own key (key#1, key#2, … and key#2.1 … for a piece
// split again), so a piece sent before a failure or a restart is not sent
// again when the packet is offered anew. A piece the platform refuses as
// too long is split again to half its size, down to minPiece. It returns
// the platform id of the last piece.
// o.progress counts the pieces sent now: an offer that sent some is not
// counted towards giving up.
func (b *Bridge) sendPieces(ctx context.Context, chat Chat, key string, out Outgoing, l Limit, depth int, o *offer) (string, error) {
	pieces := split(out, l)
	last := ""
	for i, p := range pieces {
		pkey := key
		if len(pieces) > 1 {
			pkey = fmt.Sprintf("%s#%d", key, i+1)
			if depth > 0 {
				pkey = fmt.Sprintf("%s.%d", key, i+1)
			}
			if id, ok := b.keys.Sent(pkey); ok {
				last = id
				continue
			}
			if i > 0 && clock.Sleep(ctx, b.clock, pieceDelay) != nil {
				return "", ctx.Err()
			}
		}
		id, err := b.sendFlown(ctx, chat, pkey, p)
		var se *SendError
		if errors.As(err, &se) && se.ReplyRefused {
			if bare, ok := withoutReply(p); ok {
				b.log.Info("the platform refused the reply; sending without it", "chat", chat.Channel(b.name), "err", err)
				p = bare
				id, err = b.sendFlown(ctx, chat, pkey, p)
				se = nil
				errors.As(err, &se)
			}
		}
		if se != nil && se.Unknown {
			if se.Unlooked && o.attempt < maxTries && b.canLook() {
				// its flight stays: the packet's next offer looks for it
				// over the next connection (sendFlown)
				b.log.Info("the platform did not confirm a message and it could not be looked for; it is looked for over the next connection", "channel", chat.Channel(b.name), "key", pkey, "err", err)
				return "", &SendError{Temporary: true, Msg: se.Msg + "; it is looked for over the next connection"}
			}
			// (even while stopping: the send ran to its end, and a
			// restart must not send it again)
			b.unconfirmed(ctx, chat, pkey, p, err)
			o.progress++
			continue
		}
		if se != nil && se.TooLong {
			size := l.size(p)
			if size/2 < minPiece || depth >= 8 {
				return "", fmt.Errorf("the platform refuses even %d characters as too long: %w", size, err)
			}
			b.log.Info("the platform refused a piece as too long; splitting it again", "chat", chat.Channel(b.name), "size", size, "err", err)
			half := Limit{Max: size / 2, Units: l.Units}
			id, err = b.sendPieces(ctx, chat, pkey, p, half, depth+1, o)
		}
		if err != nil {
			return "", err
		}
		b.sent_.Add(1)
		o.progress++
		if id != "" {
			b.sent.add(string(chat.Kind) + ":" + chat.ID + ":" + id)
		}
		if len(pieces) > 1 {
			if kerr := b.keys.MarkSentIn(chat.Channel(b.name), pkey, id); kerr != nil {
				b.log.Warn("could not keep a sent piece's key; a restart would send it again", "key", pkey, "err", kerr)
			}
		}
		last = id
	}
	return last, nil
}

// offer is one offer of a packet to Deliver: which attempt it is, and how
// many of its pieces it sent.
type offer struct {
	attempt, progress int
}

// canLook reports whether a send whose outcome is unknown can be looked
// for later: its flight is kept (Flights) and the adapter can search the
// chat (Finder).
func (b *Bridge) canLook() bool {
	_, finds := b.adapter.(Finder)
	_, none := b.flights.(noFlights)
	return finds && !none
}

// sendFlown sends p, the piece under pkey, with its flight recorded
// (Flights, begun by send as it goes) until its outcome is known: a flight
// left by a crash, or kept for a send that could not be looked for, is
// settled first (lookFor). The flight ends here when nothing was posted
// (any error but an unknown outcome), and with the key's MarkSent
// otherwise.
func (b *Bridge) sendFlown(ctx context.Context, chat Chat, pkey string, p Outgoing) (string, error) {
	if at, ok := b.flights.Begun(pkey); ok {
		id, found, err := b.lookFor(ctx, chat, p, at)
		if found {
			b.log.Info("a message whose send was cut before the platform answered is in the chat; not sent again", "chat", chat.Channel(b.name), "key", pkey)
			return id, nil
		}
		if err != nil {
			return "", err
		}
		b.log.Info("a message whose send was cut before the platform answered is not in the chat; sending it", "chat", chat.Channel(b.name), "key", pkey)
	}
	id, err := b.send(ctx, chat, pkey, p)
	var se *SendError
	if err != nil && !(errors.As(err, &se) && se.Unknown) {
		if ferr := b.flights.End(pkey); ferr != nil {
			b.log.Warn("could not end a refused send's record", "key", pkey, "err", ferr)
		}
	}
	return id, err
}

// lookFor settles the flight of p, begun at at and cut before the platform
// answered: it asks the adapter (Finder) whether p is in the chat. The error is a SendError
// for the bridge to act on: its outcome Unknown when the platform cannot
// be searched (Telegram) or the search could not reach the send's time,
// and Unlooked too when the connection went while it looked.
func (b *Bridge) lookFor(ctx context.Context, chat Chat, p Outgoing, at time.Time) (string, bool, error) {
	const cut = "this message's send was cut before the platform answered (the daemon stopped, or the connection went)"
	f, ok := b.adapter.(Finder)
	if !ok {
		return "", false, &SendError{Unknown: true, Msg: cut + ", and " + b.adapter.Platform() + " cannot be asked whether it arrived"}
	}
	if err := b.waitOnline(ctx); err != nil {
		return "", false, err
	}
	id, found, err := f.FindSent(ctx, b.target(chat), p, at)
	switch {
	case found:
		return id, true, nil
	case errors.Is(err, ErrOffline):
		// looked for again over the next connection, or settled unknown
		// at the last offer (sendPieces)
		return "", false, &SendError{Unknown: true, Unlooked: true, Msg: cut + "; the connection went while looking for it in the chat"}
	case ctx.Err() != nil:
		return "", false, ctx.Err()
	case err != nil:
		return "", false, &SendError{Unknown: true, Msg: cut + ", and the chat could not be searched for it: " + err.Error()}
	}
	return "", false, nil
}

// pieceDelay is the pause between the pieces of one split message: enough
// for the platform to keep their order and below Telegram's one message a
// second per chat.
const pieceDelay = 1100 * time.Millisecond

// follows reports whether p is a further part of the answer the bridge
// sent last, which waits a typing pause.
func (b *Bridge) follows(p router.Packet) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	prev := b.prev[p.Channel]
	return p.ReplyTo != "" && p.ReplyTo == prev.ReplyTo
}

// withoutReply is out without its reply part; false when it had none.
func withoutReply(out Outgoing) (Outgoing, bool) {
	var parts []OutPart
	for _, p := range out.Parts {
		if p.Kind != PartReply {
			parts = append(parts, p)
		}
	}
	if len(parts) == len(out.Parts) || len(parts) == 0 {
		return out, false
	}
	return Outgoing{Parts: parts}, true
}

// asReply makes out a reply to the platform message id: the 「name: …」
// quote the agent's expansion put at its start is dropped, since the reply
// shows what it answers.
func asReply(out Outgoing, id string) Outgoing {
	for _, p := range out.Parts {
		if p.Kind == PartReply {
			return out
		}
	}
	parts := []OutPart{{Kind: PartReply, MessageID: id}}
	for i, p := range out.Parts {
		if i == 0 && p.Kind == PartText && strings.HasPrefix(p.Text, "「") {
			if end := strings.Index(p.Text, "」"); end > 0 {
				p.Text = strings.TrimLeft(p.Text[end+len("」"):], " \t:：,，")
				if p.Text == "" {
					continue
				}
			}
		}
		parts = append(parts, p)
	}
	return Outgoing{Parts: parts}
}

// send sends one message, under key, once it is connected: a send that
// finds the adapter offline waits for the next connection and tries
// again. Its flight (Flights) begins as the message goes. It sends to
// where the chat lives now (a moved chat's new id), and follows a move
// the platform reports (SendError.MovedTo) at once.
func (b *Bridge) send(ctx context.Context, chat Chat, key string, out Outgoing) (string, error) {
	moves := 0
	for {
		if err := b.waitOnline(ctx); err != nil {
			return "", err
		}
		// A send that has begun is finished even when the bridge stops:
		// cut halfway, the platform may hold the message while the bridge
		// never learns it, and the restart would send it again. The
		// adapter bounds it by the platform's own time; sendTimeout only
		// by one that never answers. Its flight begins now, as it goes: a
		// crash while it waited for the connection leaves nothing to look
		// for.
		if err := b.flights.Begin(key, b.clock.Now()); err != nil {
			b.log.Warn("could not record a send under way; a crash during it would leave its outcome unknown", "key", key, "err", err)
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.sendTimeout)
		id, err := b.adapter.Send(sctx, b.target(chat), out)
		cancel()
		if errors.Is(err, ErrOffline) && ctx.Err() == nil {
			// the connection dropped before the adapter said so: wait a
			// moment for its Disconnected rather than spin
			if clock.Sleep(ctx, b.clock, time.Second) != nil {
				return "", ctx.Err()
			}
			continue
		}
		var se *SendError
		if errors.As(err, &se) && se.MovedTo != "" && moves < 2 {
			moves++
			b.move(b.target(chat), se.MovedTo)
			continue
		}
		return id, err
	}
}
