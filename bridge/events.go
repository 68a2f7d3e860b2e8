package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// What the platforms send besides plain messages reaches the model as
// what it is: a service message (a join, a leave, a rename, an upgrade)
// as a platform line, never as someone's message; an edit as the stored
// message's new text; a recall of the bot's own message as the stored
// reply marked recalled, with a line that says who withdrew it.

// Editor is the optional part of an Agent that replaces the text of a
// stored message by its platform id (an edit on the platform), keeping its
// place in the conversation, and returns its stored id. ErrNotStored: the
// channel holds no such message.
type Editor interface {
	Edit(ctx context.Context, channel, externalID, text string, at time.Time) (string, error)
}

// OwnRecaller is the optional part of an Agent that marks one of the
// agent's own stored messages (its stored id) recalled, and returns its
// text. ErrNotStored: the channel holds no such message.
type OwnRecaller interface {
	RecallOwn(ctx context.Context, channel, storedID string) (string, error)
}

// RecallNoticer is what a Sink offers beyond Noticer for a recall whose
// sender and operator the platform names (OneBot's group_recall:
// user_id, operator_id): a recall of the bot's own message by an admin is
// applied to the agent's stored reply.
type RecallNoticer interface {
	RecalledBy(ctx context.Context, chat Chat, msgID string, sender, operator User)
}

var _ RecallNoticer = sink{}

// RecalledBy implements RecallNoticer.
func (s sink) RecalledBy(ctx context.Context, c Chat, msgID string, sender, operator User) {
	s.b.heard()
	s.b.recalledBy(ctx, s.b.canonical(c), msgID, sender, operator)
}

func (b *Bridge) recalledBy(ctx context.Context, c Chat, msgID string, sender, operator User) {
	defer b.recoverNotice("recall")
	self := b.self()
	own := b.ownMessage(c, msgID)
	if !own && (self.ID == "" || sender.ID != self.ID) {
		b.recalled(ctx, c, msgID)
		return
	}
	channel := c.Channel(b.name)
	said := ""
	if r, ok := b.agent.(OwnRecaller); ok {
		keys, err := b.keys.SentAs(msgID)
		if err != nil {
			b.log.Warn("could not find the bot's recalled message", "channel", channel, "message_id", msgID, "err", err)
		}
		for _, key := range keys {
			stored, _, _ := strings.Cut(key, "#")
			text, err := r.RecallOwn(ctx, channel, stored)
			if err == nil {
				said = text
				b.log.Info("the bot's own message was recalled; it leaves the prompts", "channel", channel, "message_id", msgID, "by", operator.ID)
				break
			}
			if !errors.Is(err, ErrNotStored) {
				b.log.Warn("could not mark the bot's recalled message", "channel", channel, "message_id", msgID, "err", err)
			}
		}
	}
	who := operator.Name
	if who == "" && operator.ID != "" {
		who = b.roster.nameOf(c, operator.ID)
	}
	if who == "" {
		who = operator.ID
	}
	switch {
	case operator.ID == "" || operator.ID == self.ID:
		return // the bot withdrew it itself
	case who == "":
		who = "someone"
	}
	note := fmt.Sprintf("%s withdrew (recalled) your message", who)
	if said != "" {
		note += " «" + short(said, 60) + "»"
	}
	note += "; the chat no longer shows it"
	if err := b.agent.Note(ctx, channel, c.Kind, note); err != nil {
		b.log.Warn("could not note a recall of the bot's message", "channel", channel, "err", err)
	}
}

// noticed keeps a service message as a platform line of its chat.
func (b *Bridge) noticed(ctx context.Context, m *Message) {
	if !b.lists.serves(m.Chat, m.From.ID) {
		b.skipped.Add(1)
		return
	}
	if m.ID != "" && !b.seen.add(string(m.Chat.Kind)+":"+m.Chat.ID+":"+m.ID) {
		b.skipped.Add(1)
		return
	}
	text := cutInbound(renderInbound(m, m.Chat, &b.roster, b.agentNm(), b.self(), nil))
	if text == "" {
		b.skipped.Add(1)
		return
	}
	channel := m.Chat.Channel(b.name)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := b.agent.Note(rctx, channel, m.Chat.Kind, text); err != nil {
		b.skipped.Add(1)
		b.log.Warn("could not keep a service message", "channel", channel, "err", err)
		return
	}
	b.storedN.Add(1)
}

// edited replaces a stored message's text with its new version; an edit
// that addresses the bot in a group, when the first version did not, asks
// for a turn. An edit of a message never received is taken as a message.
func (b *Bridge) edited(ctx context.Context, m *Message) {
	key := string(m.Chat.Kind) + ":" + m.Chat.ID + ":" + m.ID
	e, ok := b.agent.(Editor)
	if !ok || m.ID == "" {
		b.skipped.Add(1)
		return
	}
	self := b.self()
	selfName := b.agentNm()
	if selfName == "" {
		selfName = self.Name
	}
	if m.Time.IsZero() {
		m.Time = b.clock.Now()
	}
	channel := m.Chat.Channel(b.name)
	b.quoteReplies(m, channel)
	text := cutInbound(renderInbound(m, m.Chat, &b.roster, selfName, self, nil))
	if text == "" {
		text = "[an empty message]"
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	id, err := e.Edit(rctx, channel, m.ID, text, m.Time)
	if errors.Is(err, ErrNotStored) {
		m.Edited = false
		b.inboundAs(ctx, m, "")
		return
	}
	if err != nil {
		b.skipped.Add(1)
		b.log.Warn("could not apply an edit", "channel", channel, "message_id", m.ID, "err", err)
		return
	}
	b.log.Debug("a message was edited; its stored text follows", "channel", channel, "message_id", m.ID)
	if m.Chat.Kind != Group || b.asked.has(key) {
		return // answered already (every private message asks)
	}
	want, why := addressed(m, self, b.names(), func(id string) bool { return b.ownMessage(m.Chat, id) })
	if !want {
		return
	}
	if b.answerCommand(ctx, m) {
		return
	}
	b.asked.add(key)
	name := displayName(m.From)
	a := asker{name: name, id: b.speakerID(m.From.ID), why: "edit: " + why, at: b.clock.Now()}
	if b.request(m.Chat, id, a) {
		b.owe(OwedTurn{Channel: channel, MessageID: id, Speaker: name, SpeakerID: a.id, At: m.Time})
	}
}

func displayName(u User) string {
	switch {
	case u.Name != "":
		return u.Name
	case u.Username != "":
		return u.Username
	}
	return u.ID
}

// recordingSent is a sent log without SentIDs (one a caller gave) that
// also remembers, in memory, for a recall or a reply, which key each
// platform id of the bot's was sent under, and in which chat.
type recordingSent struct {
	SentLog
	own *ownSent
}

func (r *recordingSent) SentAs(platformID string) ([]string, error) {
	return r.own.keys(platformID), nil
}

func (r *recordingSent) SentIn(channel, platformID string) (bool, error) {
	return r.own.in(channel, platformID), nil
}

func (r *recordingSent) MarkSent(key, platformID string) error {
	return r.MarkSentIn("", key, platformID)
}

func (r *recordingSent) MarkSentIn(channel, key, platformID string) error {
	if platformID != "" {
		r.own.add(platformID, key, channel)
	}
	return r.SentLog.MarkSent(key, platformID)
}

// ownSent maps the platform ids of the latest messages the bot sent to
// their keys and channels (a platform id may recur across chats),
// bounded.
type ownSent struct {
	mu   sync.Mutex
	m    map[string][]ownKey
	ring []string
	next int
}

type ownKey struct{ key, channel string }

const ownSentMax = 4096

func (o *ownSent) add(id, key, channel string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m, o.ring = map[string][]ownKey{}, make([]string, ownSentMax)
	}
	if old := o.ring[o.next]; old != "" {
		delete(o.m, old)
	}
	o.ring[o.next] = id
	o.next = (o.next + 1) % len(o.ring)
	o.m[id] = append(o.m[id], ownKey{key, channel})
}

func (o *ownSent) keys(id string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var keys []string
	for _, k := range o.m[id] {
		keys = append(keys, k.key)
	}
	return keys
}

func (o *ownSent) in(channel, id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range o.m[id] {
		if channel != "" && k.channel == channel {
			return true
		}
	}
	return false
}
