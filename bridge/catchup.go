package bridge

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/clock"
)

// Catching up. An implementation does not keep what the chats said while
// cyan was away — restarting, or cut off by the network. NapCat's reverse
// WebSocket client sends an event only while its socket is open and drops
// it otherwise (packages/napcat-onebot/network/websocket-client.ts,
// onEvent, commit af07479), and its forward server has no one to send to.
// So after each connection the bridge asks an adapter that can read a
// chat's history (CatchUp) what each chat it kept a message of in the last
// catchUpWindow said after the newest one it kept (Kept). It takes those
// messages in as it takes live ones, marked Missed: each is stored once (an
// id it holds is a duplicate), in its own time. A missed message starts no
// turn of its own, and a "/command" in one is not run. The newest missed
// message addressed to the bot in a chat gets its turn — as a turn a
// restart cut would — when it is at most ResumeMaxAge old and nothing was
// said live in that chat since the catch-up began. Telegram needs none of
// this: the Bot API keeps a bot's updates for 24 hours until it polls.

// ChatMark is a chat's newest kept message: where catching up starts.
type ChatMark struct {
	Channel    string
	ExternalID string // its platform id
	Time       time.Time
}

// Kept is an Agent that can list a bridge's chats with a message kept
// since since, each with its newest (StoreHistory): with it, and an
// adapter that is a CatchUp, the bridge catches up after a connection.
type Kept interface {
	Kept(bridge string, since time.Time) ([]ChatMark, error)
}

// CatchUp is an adapter that can read what a chat said while the bridge
// was away.
type CatchUp interface {
	// Missed returns chat's messages said after the one with platform id
	// after (said at at), oldest first — the newest of them when there are
	// more than it reads. ErrOffline: no connection now; ErrUnsupported:
	// the platform cannot read a chat's history.
	Missed(ctx context.Context, chat Chat, after string, at time.Time) ([]*Message, error)
}

// catchUpWindow bounds the chats caught up: those with a message kept this
// recently.
const catchUpWindow = 7 * 24 * time.Hour

// catchUpEvery spaces catch-ups: a connection that flaps does not read
// every chat's history at each of its connections; one made within this of
// the last catch-up's start is caught up on when it has passed.
const catchUpEvery = 30 * time.Second

// catching is the bridge's catch-up: at most one runs, a connection made
// while it runs has it run once more, and runs begin catchUpEvery apart.
type catching struct {
	mu      sync.Mutex
	running bool
	again   bool
	reading bool      // the running one has begun reading
	last    time.Time // when the last one began
	// missed holds, per chat, the newest missed message addressed to the
	// bot while a chat is caught up (inboundAs fills it).
	missed map[Chat]missedAsk
}

// missedAsk is a missed message that asked for a turn.
type missedAsk struct {
	id    string // stored id
	asker asker
	said  time.Time
}

// catchUpSoon runs catchUp in the background, once more if one runs.
func (b *Bridge) catchUpSoon() {
	kept, ok := b.agent.(Kept)
	cu, ok2 := b.adapter.(CatchUp)
	if !ok || !ok2 {
		return
	}
	b.mu.Lock()
	ctx := b.ctx
	b.mu.Unlock()
	if ctx == nil {
		return
	}
	b.catching.mu.Lock()
	if b.catching.running {
		// one waiting to begin covers this connection; one reading
		// already runs once more
		b.catching.again = b.catching.again || b.catching.reading
		b.catching.mu.Unlock()
		return
	}
	b.catching.running = true
	b.catching.mu.Unlock()
	b.goSafe("catch-up", func() {
		finished := false
		defer func() {
			if !finished { // a panic (goSafe logs it): the next connection catches up
				b.catching.mu.Lock()
				b.catching.running, b.catching.reading, b.catching.again = false, false, false
				b.catching.mu.Unlock()
			}
		}()
		for b.catchUpNext(ctx) {
			b.catchUp(ctx, kept, cu)
		}
		finished = true
	})
}

// catchUpNext waits until catchUpEvery has passed since the last
// catch-up began and reports whether one is to run now: the first, or one
// more asked for while the last read. When not, the catch-up is over
// (running cleared under the same lock a new connection reads it by).
func (b *Bridge) catchUpNext(ctx context.Context) bool {
	c := &b.catching
	c.mu.Lock()
	first := !c.reading
	if !first {
		c.reading = false
		if !c.again || ctx.Err() != nil {
			c.running = false
			c.mu.Unlock()
			return false
		}
		c.again = false
	}
	wait := c.last.Add(catchUpEvery).Sub(b.clock.Now())
	c.mu.Unlock()
	if wait > 0 && clock.Sleep(ctx, b.clock, wait) != nil {
		c.mu.Lock()
		c.running = false
		c.mu.Unlock()
		return false
	}
	c.mu.Lock()
	c.last, c.reading = b.clock.Now(), true
	c.mu.Unlock()
	return true
}

// catchUp takes in what each kept chat said after its newest kept message.
func (b *Bridge) catchUp(ctx context.Context, kept Kept, cu CatchUp) {
	began := b.clock.Now()
	marks, err := kept.Kept(b.name, began.Add(-catchUpWindow))
	if err != nil {
		b.log.Warn("could not list the chats to catch up on", "err", err)
		return
	}
	total := 0
	for _, mk := range marks {
		if ctx.Err() != nil {
			return
		}
		chat, ok := ParseChannel(b.name, mk.Channel)
		if !ok || mk.ExternalID == "" {
			continue
		}
		msgs, err := cu.Missed(ctx, b.target(chat), mk.ExternalID, mk.Time)
		if errors.Is(err, ErrOffline) {
			return // the next connection catches up
		}
		if errors.Is(err, ErrUnsupported) {
			b.log.Info("the platform cannot read a chat's history; what the chats said while the bridge was away is not kept")
			return
		}
		if err != nil {
			b.log.Warn("could not catch up on a chat; what it said while the bridge was away is not kept", "channel", mk.Channel, "err", err)
			continue
		}
		b.catching.mu.Lock()
		delete(b.catching.missed, chat)
		b.catching.mu.Unlock()
		floor := mk.Time
		for _, m := range msgs {
			if m == nil {
				continue
			}
			// said after the mark, in this order: a platform's whole
			// seconds must not put one before it
			if !m.Time.After(floor) {
				m.Time = floor.Add(time.Millisecond)
			}
			floor = m.Time
			m.Missed = true
			m.Chat = b.canonical(m.Chat)
			b.inbound(ctx, m)
		}
		total += len(msgs)
		b.answerMissed(chat, began)
	}
	if total > 0 {
		b.log.Info("caught up on what the chats said while the bridge was away", "chats", len(marks), "messages", total)
	}
}

// answerMissed gives the newest missed message of chat that asked for a
// turn its turn, when it is recent (ResumeMaxAge) and no one spoke live in
// the chat since began.
func (b *Bridge) answerMissed(chat Chat, began time.Time) {
	b.catching.mu.Lock()
	ask, ok := b.catching.missed[chat]
	delete(b.catching.missed, chat)
	b.catching.mu.Unlock()
	if !ok {
		return
	}
	now := b.clock.Now()
	if b.resumeMaxAge >= 0 && now.Sub(ask.said) > b.resumeMaxAge {
		return
	}
	b.mu.Lock()
	live := b.chat(chat).heard.After(began)
	b.mu.Unlock()
	if live {
		return // the chat's live talk has its own turn, with these in its context
	}
	b.log.Info("a message addressed to the bot while the bridge was away is answered now", "channel", chat.Channel(b.name), "said", ask.said)
	ask.asker.at = now
	if b.request(chat, ask.id, ask.asker) {
		b.owe(OwedTurn{Channel: chat.Channel(b.name), MessageID: ask.id, Speaker: ask.asker.name, SpeakerID: ask.asker.id, At: ask.said})
	}
}

// missedAsked records a missed message that asked for a turn (the newest
// of its chat wins: they come oldest first).
func (b *Bridge) missedAsked(chat Chat, id string, a asker, said time.Time) {
	b.catching.mu.Lock()
	defer b.catching.mu.Unlock()
	if b.catching.missed == nil {
		b.catching.missed = map[Chat]missedAsk{}
	}
	b.catching.missed[chat] = missedAsk{id: id, asker: a, said: said}
}
