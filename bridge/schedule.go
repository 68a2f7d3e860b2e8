package bridge

import (
	"context"
	"errors"
	"time"

	"github.com/cyan-agent/cyan/clock"
)

// chatState is one chat's turn scheduling: addressed messages wait a short
// debounce for more (at most MaxWait), and those that arrive while a turn
// runs are answered together by one following turn.
type chatState struct {
	chat    Chat
	last    string // the newest stored message id
	owed    string // the newest addressed message id, kept in the owed log
	pending []asker
	first   time.Time // when the oldest pending asker arrived
	due     time.Time // when the next turn may start
	waiting bool      // a waiter goroutine is scheduled
	running bool
	turns   window    // this chat's turns, for the group limit
	heard   time.Time // when a message was last stored live (not caught up)
}

// note records a stored message that asks for nothing.
func (b *Bridge) note(c Chat, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cs := b.chat(c)
	cs.last, cs.heard = id, b.clock.Now()
}

func (b *Bridge) chat(c Chat) *chatState {
	cs := b.chats[c]
	if cs == nil {
		cs = &chatState{chat: c}
		b.chats[c] = cs
	}
	return cs
}

// request asks for a turn in chat because of a's message id; false when
// the speaker is over their turn limit (the message is kept, not
// answered).
func (b *Bridge) request(c Chat, id string, a asker) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	cs := b.chat(c)
	cs.last = id
	now := b.clock.Now()
	cs.heard = now
	if a.why != "chime-in" {
		w := b.users[a.id]
		if w == nil {
			w = new(window)
			b.users[a.id] = w
		}
		if ok, _ := w.allow(now, b.manners.UserTurns); !ok {
			b.log.Debug("speaker over the turn limit; message kept, not answered", "channel", c.Channel(b.name), "speaker", a.id)
			return false
		}
	}
	if a.why != "chime-in" {
		cs.owed = id
	}
	if len(cs.pending) == 0 {
		cs.first = now
	}
	cs.pending = append(cs.pending, a)
	if cs.running {
		return true // the turn's end schedules the next
	}
	b.schedule(cs, now)
	return true
}

// schedule sets when cs's next turn is due and makes sure a waiter runs.
// The caller holds b.mu.
func (b *Bridge) schedule(cs *chatState, now time.Time) {
	due := now.Add(time.Duration(b.manners.Debounce))
	if max := cs.first.Add(time.Duration(b.manners.MaxWait)); b.manners.MaxWait > 0 && due.After(max) {
		due = max
	}
	if due.Before(now) {
		due = now
	}
	b.scheduleAt(cs, due)
}

// scheduleAt makes cs due at due and makes sure a waiter runs. The caller
// holds b.mu.
func (b *Bridge) scheduleAt(cs *chatState, due time.Time) {
	cs.due = due
	if cs.waiting || b.ctx == nil {
		return
	}
	cs.waiting = true
	b.goSafe("turn-wait", func() { b.wait(cs) })
}

// wait sleeps until cs is due (its due time may move while it sleeps),
// then starts the turn.
func (b *Bridge) wait(cs *chatState) {
	ctx := b.ctx
	for {
		b.mu.Lock()
		now := b.clock.Now()
		if now.Before(cs.due) {
			d := cs.due.Sub(now)
			b.mu.Unlock()
			if clock.Sleep(ctx, b.clock, d) != nil {
				b.mu.Lock()
				cs.waiting = false
				b.mu.Unlock()
				return
			}
			continue
		}
		if cs.chat.Kind == Group {
			if in, end := b.quiet.in(now); in {
				cs.due = end
				b.mu.Unlock()
				b.log.Info("quiet hours: the answer waits", "channel", cs.chat.Channel(b.name), "until", end)
				continue
			}
		}
		if cs.chat.Kind == Group {
			if ok, next := cs.turns.allow(now, b.manners.GroupTurns); !ok {
				cs.due = next
				b.mu.Unlock()
				b.log.Debug("group over its turn limit; the answer waits", "channel", cs.chat.Channel(b.name), "until", next)
				continue
			}
		}
		if held := b.media.waiting(cs.chat); held != nil {
			// A message of this chat still loads its media (at most the
			// budget): the turn waits for it, so the model sees it.
			b.mu.Unlock()
			select {
			case <-held:
			case <-ctx.Done():
			}
			continue
		}
		askers := cs.pending
		cs.pending, cs.waiting, cs.running = nil, false, true
		t := Turn{Channel: cs.chat.Channel(b.name), Kind: cs.chat.Kind, MessageID: cs.last}
		t.Speaker, t.SpeakerID = b.speakerOf(askers)
		owed := cs.owed
		b.mu.Unlock()
		b.runTurn(ctx, cs, t, askers, owed)
		return
	}
}

// speakerOf is whose permissions a batched turn runs with: the first asker
// who is not the owner (the least trusted), else the last asker.
func (b *Bridge) speakerOf(askers []asker) (string, string) {
	for _, a := range askers {
		if !b.agent.Owner(a.id) {
			return a.name, a.id
		}
	}
	if n := len(askers); n > 0 {
		return askers[n-1].name, askers[n-1].id
	}
	return "", ""
}

// runTurn runs one turn with the typing indicator, then schedules the
// following turn if more was addressed meanwhile.
// A turn that ends well pays the chat's owed turn (owed, the newest
// addressed message when it started).
func (b *Bridge) runTurn(ctx context.Context, cs *chatState, t Turn, askers []asker, owed string) {
	tctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.typing(tctx, cs.chat)
	}()
	err := b.agent.Answer(ctx, t)
	stop()
	<-done
	var later *Later
	if !errors.As(err, &later) {
		b.turns.Add(1)
	}
	switch {
	case ctx.Err() != nil: // cut by the stop: still owed
	case err == nil:
		b.paid(t.Channel, owed)
	case later != nil:
		b.log.Info("the turn must wait; asking again later", "channel", t.Channel, "in", later.After, "reason", later.Reason)
	default:
		b.log.Warn("turn failed", "channel", t.Channel, "err", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	cs.running = false
	now := b.clock.Now()
	if later != nil && ctx.Err() == nil {
		// The askers wait for the turn that answers them all.
		cs.pending = append(askers, cs.pending...)
		cs.first = now
		b.scheduleAt(cs, now.Add(max(later.After, time.Second)))
		return
	}
	if len(cs.pending) > 0 {
		cs.first = now
		b.schedule(cs, now)
	}
}

// typing shows "typing…" every TypingEvery until ctx ends, where the
// platform can.
func (b *Bridge) typing(ctx context.Context, c Chat) {
	every := time.Duration(b.manners.TypingEvery)
	if every <= 0 {
		return
	}
	for {
		err := b.adapter.Typing(ctx, b.target(c))
		if errors.Is(err, ErrUnsupported) {
			return
		}
		if clock.Sleep(ctx, b.clock, every) != nil {
			return
		}
	}
}
