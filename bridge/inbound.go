package bridge

import (
	"context"
	"errors"
	"runtime/debug"
	"strings"
	"time"
)

// self is who the bot is on the platform (zero until connected).
func (b *Bridge) self() User {
	if u := b.selfUser.Load(); u != nil {
		return *u
	}
	return User{}
}

// names are what the bot answers to in a group: the persona's name, the
// configured names and wake words.
func (b *Bridge) names() []string {
	out := make([]string, 0, 2+len(b.manners.Names)+len(b.manners.WakeWords))
	if n := b.agentNm(); n != "" {
		out = append(out, n)
	}
	out = append(out, b.manners.Names...)
	return append(out, b.manners.WakeWords...)
}

// speakerID is the identity of a platform user: "<bridge>:<user id>".
func (b *Bridge) speakerID(userID string) string { return b.name + ":" + userID }

// inbound handles one incoming message: keep it (unless it is the bot's
// own, a duplicate, or from a chat or person the lists exclude), then
// decide whether it asks for a turn. It never panics into the adapter.
func (b *Bridge) inbound(ctx context.Context, m *Message) { b.inboundAs(ctx, m, "") }

// inboundAs is inbound; a why other than "" makes the message address the
// bot whatever it says (a poke).
func (b *Bridge) inboundAs(ctx context.Context, m *Message, forced string) {
	defer func() {
		if v := recover(); v != nil {
			b.skipped.Add(1)
			b.log.Error("incoming message handling panicked; skipped", "panic", v, "stack", string(debug.Stack()))
		}
	}()
	// a message caught up on (catchup.go) is neither heard live nor, when
	// not kept (the bot's own, one kept already), skipped
	live := m == nil || !m.Missed
	skip := func() {
		if live {
			b.skipped.Add(1)
		}
	}
	if live {
		b.received.Add(1)
	}
	if m != nil && m.Notice && m.Chat.ID != "" {
		b.noticed(ctx, m)
		return
	}
	self := b.self()
	switch {
	case m == nil || m.Chat.ID == "" || m.From.ID == "":
		skip()
		b.log.Warn("incoming message without chat or sender; skipped")
		return
	case self.ID != "" && m.From.ID == self.ID:
		skip() // the bot's own message, echoed back
		return
	case !b.lists.serves(m.Chat, m.From.ID):
		skip()
		b.log.Debug("message from a chat or person not served; not kept", "chat", m.Chat.Channel(b.name), "user", m.From.ID)
		return
	}
	key := string(m.Chat.Kind) + ":" + m.Chat.ID + ":" + m.ID
	if m.Edited {
		b.edited(ctx, m)
		return
	}
	if m.ID != "" && !b.seen.add(key) {
		skip()
		b.log.Debug("duplicate message ignored", "chat", m.Chat.Channel(b.name), "message_id", m.ID)
		return
	}
	if m.Time.IsZero() {
		m.Time = b.clock.Now()
	}
	if forced == "" && !m.Missed && b.answerCommand(ctx, m) {
		return
	}
	channel := m.Chat.Channel(b.name)
	selfName := b.agentNm()
	if selfName == "" {
		selfName = self.Name
	}
	images := b.fetchImages(ctx, m)
	b.quoteReplies(m, channel)
	text := cutInbound(renderInbound(m, m.Chat, &b.roster, selfName, self, images))
	if text == "" {
		text = "[an empty message]"
	}
	name := m.From.Name
	if name == "" {
		name = m.From.Username
	}
	if name == "" {
		name = m.From.ID
	}
	// Stored even when the daemon stops meanwhile (the wait for media may
	// have outlasted Run's context): a message once taken is kept.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	id, err := b.agent.Record(rctx, Inbound{Channel: channel, Kind: m.Chat.Kind, User: name, UserID: b.speakerID(m.From.ID),
		Text: text, ExternalID: m.ID, Time: m.Time})
	if errors.Is(err, ErrDuplicate) {
		skip()
		return
	}
	if err != nil {
		b.seen.remove(key) // not kept: a resend may be
		skip()
		b.log.Error("could not store an incoming message", "channel", channel, "err", err)
		return
	}
	b.storedN.Add(1)
	if b.stored != nil {
		b.stored(m.Chat, m.ID)
	}
	b.roster.saw(m.Chat, User{ID: m.From.ID, Name: name, Username: m.From.Username}, m.ID)
	if m.Chat.Kind == Private {
		b.wrote(User{ID: m.From.ID, Name: name, Username: m.From.Username}, m.Time)
	}
	if m.ID != "" && b.recalledEarly.has(key) {
		b.recall(rctx, m.Chat, m.ID) // withdrawn while its media loaded
		return
	}

	want, why := true, "private"
	if m.Missed {
		// said while the bridge was away: at most the newest of its chat
		// that asks for a turn gets one, once the chat is caught up
		if m.Chat.Kind == Group {
			want, why = addressed(m, self, b.names(), func(id string) bool { return b.ownMessage(m.Chat, id) })
		}
		if want {
			b.missedAsked(m.Chat, id, asker{name: name, id: b.speakerID(m.From.ID), why: "missed"}, m.Time)
		}
		return
	}
	if forced != "" {
		why = forced
	} else if m.Chat.Kind == Group {
		want, why = addressed(m, self, b.names(), func(id string) bool { return b.ownMessage(m.Chat, id) })
		if !want && b.manners.ChimeIn > 0 && !b.paused.has(m.Chat) && b.rand() < b.manners.ChimeIn {
			want, why = true, "chime-in"
		}
	}
	if !want {
		b.note(m.Chat, id)
		return
	}
	if why != "chime-in" {
		b.asked.add(key)
	}
	if b.request(m.Chat, id, asker{name: name, id: b.speakerID(m.From.ID), why: why, at: b.clock.Now()}) && why != "chime-in" {
		b.owe(OwedTurn{Channel: channel, MessageID: id, Speaker: name, SpeakerID: b.speakerID(m.From.ID), At: m.Time})
	}
}

// asker is someone whose message asked for a turn.
type asker struct {
	name, id, why string
	at            time.Time
}

func trimPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
