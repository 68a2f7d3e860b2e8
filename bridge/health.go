package bridge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/clock"
)

// A connection is not an account: a QQ account kicked offline (NapCat's
// bot_offline notice, heartbeats with status.online false) keeps its
// WebSocket open and hears nothing. The adapter tells the bridge so
// (AccountWatcher); the bridge then reads as offline — not connected, its
// state "offline: <why>", in `cyan bridges`, doctor and the metrics — its
// answers wait, and the owner is told on another channel (Options.Alert).
//
// A bridge that stays connected but hears nothing for SilentAfter while
// its chats were busy is probed (Prober: OneBot get_status, Telegram
// getMe) and flagged (Status.Silent) until an event arrives.

// AccountWatcher is what a Sink offers for the state of the account
// behind a live connection. The bridge's sink implements it; an adapter
// checks with a type assertion.
type AccountWatcher interface {
	// AccountOffline reports that the platform logged the account out
	// (why: the platform's words).
	AccountOffline(why string)
	// AccountOnline reports that the account is back.
	AccountOnline()
}

// Prober is implemented by adapters that can ask the platform whether
// the account is alive: nil when it answered and is online;
// ErrAccountOffline (wrapped) when it answered that it is not.
type Prober interface {
	Probe(ctx context.Context) error
}

// ErrAccountOffline is a probe's answer that the account is logged out.
var ErrAccountOffline = errors.New("the account is offline")

// DefaultSilentAfter is how long a busy bridge may hear nothing before it
// is probed (bridges.silent_after).
const DefaultSilentAfter = 15 * time.Minute

// busyEvents is how many events within SilentAfter make the chats busy:
// silence after them is suspicious, silence after a quiet night is not.
const busyEvents = 3

var _ AccountWatcher = sink{}

// AccountOffline implements AccountWatcher.
func (s sink) AccountOffline(why string) { s.b.accountOffline(why) }

// AccountOnline implements AccountWatcher.
func (s sink) AccountOnline() { s.b.accountOnline() }

func (b *Bridge) accountOffline(why string) {
	if why == "" {
		why = "the platform logged the account out"
	}
	b.conn.Lock()
	if b.st.Offline {
		b.conn.Unlock() // told already: the first reason stays
		return
	}
	if b.st.Connected {
		b.online = make(chan struct{}) // answers wait for the account
	}
	b.st.Connected, b.st.Offline, b.st.Since = false, true, b.clock.Now()
	b.st.State = "offline: " + why
	b.st.LastError, b.st.ErrorAt = "account offline: "+why, b.clock.Now()
	b.post("offline", errors.New(why))
	b.conn.Unlock()
	b.log.Warn("the account is offline; answers wait until it is back", "why", why)
	if b.alert != nil {
		self := b.self()
		b.goSafe("offline alert", func() {
			b.alert(fmt.Sprintf("bridge %s: the account %s is offline (%s); log it in again — its chats are not heard until then", b.name, orWord(self.ID, "?"), why))
		})
	}
}

func (b *Bridge) accountOnline() {
	if b.markOnline() {
		b.catchUpSoon() // what the chats said while it was logged out
	}
}

// markOnline records that the account is back; false when it was not
// offline.
func (b *Bridge) markOnline() bool {
	b.conn.Lock()
	defer b.conn.Unlock()
	if !b.st.Offline {
		return false
	}
	b.st.Offline, b.st.State, b.st.Since = false, "", b.clock.Now()
	if !b.st.Connected {
		close(b.online)
	}
	b.st.Connected = true
	b.log.Info("the account is online again")
	b.post("connected", nil)
	return true
}

// heard notes an event from the platform, for the silence watch.
func (b *Bridge) heard() {
	b.hearing.heard(b.clock.Now())
	b.conn.Lock()
	b.st.Silent = ""
	b.conn.Unlock()
}

// hearing keeps the times of the latest events.
type hearing struct {
	mu    sync.Mutex
	times [busyEvents]time.Time // newest last
}

func (h *hearing) heard(t time.Time) {
	h.mu.Lock()
	copy(h.times[:], h.times[1:])
	h.times[len(h.times)-1] = t
	h.mu.Unlock()
}

// silentSince is when the last event came, and whether the chats were
// busy before it (busyEvents within span).
func (h *hearing) silentSince(span time.Duration) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	last, first := h.times[len(h.times)-1], h.times[0]
	return last, !first.IsZero() && last.Sub(first) <= span
}

// watchSilence probes a connected bridge that has heard nothing for
// SilentAfter after busy chats, and flags it (Status.Silent) until an
// event comes. It returns when ctx ends.
func (b *Bridge) watchSilence(ctx context.Context) {
	every := b.silentAfter
	if every <= 0 {
		return
	}
	for {
		wait := every
		last, busy := b.hearing.silentSince(every)
		now := b.clock.Now()
		b.conn.Lock()
		connected, flagged := b.st.Connected, b.st.Silent != ""
		b.conn.Unlock()
		if connected && busy && !flagged && now.Sub(last) >= every {
			b.probe(ctx, now.Sub(last))
		} else if busy && now.Sub(last) < every {
			wait = every - now.Sub(last)
		}
		if clock.Sleep(ctx, b.clock, wait) != nil {
			return
		}
	}
}

// probe asks the adapter whether the account is alive and flags the
// silence with the answer.
func (b *Bridge) probe(ctx context.Context, silent time.Duration) {
	answer := "not probed: the platform has no way"
	var err error
	if p, ok := b.adapter.(Prober); ok {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = p.Probe(pctx)
		cancel()
		switch {
		case err == nil:
			answer = "the platform says the account is online"
		case errors.Is(err, ErrAccountOffline):
			answer = "the platform says the account is offline"
		default:
			answer = "the probe failed: " + err.Error()
		}
	}
	flag := fmt.Sprintf("no event for %s while the chats were busy; %s", silent.Round(time.Second), answer)
	b.log.Warn("the bridge is connected but hears nothing", "silent", silent, "probe", answer)
	b.conn.Lock()
	b.st.Silent = flag
	b.post("silent", errors.New(flag))
	b.conn.Unlock()
	if errors.Is(err, ErrAccountOffline) {
		b.accountOffline("a probe found the account logged out after " + silent.Round(time.Second).String() + " of silence")
	}
}

// Tell sends text to a chat of this bridge now, outside the outbox (an
// alert for the owner about another bridge), once the bridge is online.
func (b *Bridge) Tell(ctx context.Context, c Chat, text string) error {
	if err := b.waitOnline(ctx); err != nil {
		return err
	}
	id, err := b.adapter.Send(ctx, c, Outgoing{Parts: []OutPart{{Kind: PartText, Text: text}}})
	if err == nil {
		b.markOwn(c, id)
	}
	return err
}
