package bridge

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"time"
)

var _ Noticer = sink{}

// Recalled implements Noticer.
func (s sink) Recalled(ctx context.Context, c Chat, msgID string) {
	s.b.heard()
	s.b.recalled(ctx, s.b.canonical(c), msgID)
}

// Poked implements Noticer.
func (s sink) Poked(ctx context.Context, c Chat, from User, at time.Time) {
	s.b.heard()
	s.b.poked(ctx, s.b.canonical(c), from, at)
}

// recalled marks a withdrawn message recalled in the store (Recaller): it
// leaves the prompts and recall results. A message not stored yet (its
// media still loading) is marked once it is.
func (b *Bridge) recalled(ctx context.Context, c Chat, msgID string) {
	defer b.recoverNotice("recall")
	key := string(c.Kind) + ":" + c.ID + ":" + msgID
	if err := b.recall(ctx, c, msgID); errors.Is(err, ErrNotStored) {
		b.recalledEarly.add(key)
	}
}

func (b *Bridge) recall(ctx context.Context, c Chat, msgID string) error {
	r, ok := b.agent.(Recaller)
	if !ok {
		return nil
	}
	err := r.Recall(ctx, c.Channel(b.name), msgID)
	switch {
	case err == nil:
		b.log.Info("a message was recalled; it leaves the prompts", "channel", c.Channel(b.name), "message_id", msgID)
	case errors.Is(err, ErrNotStored):
	default:
		b.log.Warn("could not mark a recalled message", "channel", c.Channel(b.name), "message_id", msgID, "err", err)
	}
	return err
}

// poked handles a poke (nudge) of the bot: it is kept as a message of the
// chat, "[poke: <name> poked <bot>]", and asks for a turn — always in a
// private chat; in a group unless manners.ignore_pokes names the group
// (or "*").
func (b *Bridge) poked(ctx context.Context, c Chat, from User, at time.Time) {
	defer b.recoverNotice("poke")
	if from.Name == "" {
		from.Name = b.roster.nameOf(c, from.ID)
	}
	who := from.Name
	if who == "" {
		who = from.ID
	}
	self := b.agentNm()
	if self == "" {
		self = b.self().Name
	}
	m := &Message{Chat: c, From: from, Time: at, ID: "poke-" + from.ID + "-" + strconv.FormatInt(at.UnixMilli(), 10),
		Parts: []Part{{Kind: PartOther, Text: fmt.Sprintf("poke: %s poked %s", who, orWord(self, "you"))}}}
	if c.Kind == Group && (slices.Contains(b.manners.IgnorePokes, c.ID) || slices.Contains(b.manners.IgnorePokes, "*")) {
		b.inbound(ctx, m)
		return
	}
	b.inboundAs(ctx, m, "poke")
}

func (b *Bridge) recoverNotice(what string) {
	if v := recover(); v != nil {
		b.log.Error("notice handling panicked; skipped", "notice", what, "panic", v, "stack", string(debug.Stack()))
	}
}
