package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// maxTries bounds the attempts at one message on temporary errors.
const maxTries = 6

// deliver sends the outgoing messages of the bridge's channels, in order:
// it waits for a connection, pauses between the parts of one answer as a
// person types, retries what may work later, and tells the model (a note
// in the chat) what could not be delivered.
func (b *Bridge) deliver(ctx context.Context) error {
	var prev Packet
	for {
		p, err := b.outbox.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("bridge %s: outbox: %w", b.name, err)
		}
		chat, ok := ParseChannel(b.name, p.Channel)
		if !ok {
			_ = b.outbox.Done(p)
			continue
		}
		out := parseOutgoing(p.Text, chat, &b.roster)
		if p.QuotedID != "" {
			out = asReply(out, p.QuotedID)
		}
		if len(out.Parts) == 0 {
			_ = b.outbox.Done(p)
			continue
		}
		if p.ReplyTo != "" && p.ReplyTo == prev.ReplyTo && p.Channel == prev.Channel {
			if sleep(ctx, b.clock, replyDelay(b.manners, p.Text)) != nil {
				return nil
			}
		}
		if err := b.send(ctx, chat, p, out); err != nil {
			if ctx.Err() != nil {
				return nil // still due: delivered after the restart
			}
			b.failed.Add(1)
			b.log.Warn("reply not delivered", "channel", p.Channel, "message", p.ID, "err", err)
			note := fmt.Sprintf("your message %q could not be delivered to this chat: %v", short(p.Text, 60), err)
			if nerr := b.agent.Note(ctx, p.Channel, chat.Kind, note); nerr != nil {
				b.log.Warn("could not note the failed delivery", "channel", p.Channel, "err", nerr)
			}
		}
		if err := b.outbox.Done(p); err != nil {
			return fmt.Errorf("bridge %s: outbox: %w", b.name, err)
		}
		prev = p
	}
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

// send tries one message until it is sent, a permanent error says no, or
// the temporary ones run out; while offline it waits for the connection.
func (b *Bridge) send(ctx context.Context, chat Chat, p Packet, out Outgoing) error {
	backoff := time.Second
	var last error
	for try := 0; try < maxTries; {
		if err := b.waitOnline(ctx); err != nil {
			return err
		}
		id, err := b.adapter.Send(ctx, chat, out)
		if err == nil {
			b.sent_.Add(1)
			if id != "" {
				b.sent.add(string(chat.Kind) + ":" + chat.ID + ":" + id)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrOffline) {
			continue // wait for the next connection; not a try
		}
		last = err
		var se *SendError
		if !errors.As(err, &se) || !se.Temporary {
			return err
		}
		try++
		wait := backoff
		if se.RetryAfter > 0 {
			wait = se.RetryAfter
		}
		backoff = min(backoff*2, time.Minute)
		b.log.Info("send failed; trying again", "channel", p.Channel, "err", err, "in", wait)
		if err := sleep(ctx, b.clock, wait); err != nil {
			return err
		}
	}
	return fmt.Errorf("gave up after %d tries: %w", maxTries, last)
}
