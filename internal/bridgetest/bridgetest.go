// Package bridgetest runs a bridge without the daemon, for end-to-end
// tests and benchmarks of the bridges against the platform fakes
// (onebottest, tgtest): Outbox is the router's outbox of one bridge in
// memory, in a lane per chat with the router's rules (router.AttachLanes),
// and Agent a companion that stores what it is given and answers every
// turn at once, through the outbox, as the daemon's does.
//
// It may import bridge and router.
package bridgetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/router"
)

// Outbox is one component's outbox in memory, delivered in lanes by
// channel: each lane in order, one packet at a time, a failed one offered
// again after Retry before any later one of its lane; lanes at once.
type Outbox struct {
	// Retry is the wait after a failed offer (0: 1 s doubling to 1 min,
	// the router's).
	Retry func(attempt int) time.Duration

	mu      sync.Mutex
	q       []router.Delivery
	seq     uint64
	wake    chan struct{}
	dropped []error
	acked   int
}

// NewOutbox makes an empty outbox.
func NewOutbox() *Outbox { return &Outbox{wake: make(chan struct{}, 1)} }

// Publish queues a packet.
func (o *Outbox) Publish(p router.Packet) {
	o.mu.Lock()
	o.seq++
	o.q = append(o.q, router.Delivery{Packet: p, Seq: o.seq})
	o.mu.Unlock()
	o.poke()
}

func (o *Outbox) poke() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Pending is how many packets wait.
func (o *Outbox) Pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.q)
}

// Dropped are the packets given up (Permanent errors).
func (o *Outbox) Dropped() []error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]error(nil), o.dropped...)
}

func (o *Outbox) retry(attempt int) time.Duration {
	if o.Retry != nil {
		return o.Retry(attempt)
	}
	return min(time.Second<<min(attempt-1, 6), time.Minute)
}

// Attach delivers to c until ctx ends: the bridge's Options.Attach.
func (o *Outbox) Attach(ctx context.Context, c router.Component) error {
	type result struct {
		d   router.Delivery
		err error
	}
	busy := map[string]bool{}
	notBefore := map[string]time.Time{}
	attempts := map[uint64]int{}
	results := make(chan result)
	running := 0
	defer func() {
		for ; running > 0; running-- {
			<-results
		}
	}()
	for {
		o.mu.Lock()
		seen := map[string]bool{}
		var heads []router.Delivery
		for _, d := range o.q {
			if !seen[d.Channel] {
				seen[d.Channel] = true
				heads = append(heads, d)
			}
		}
		o.mu.Unlock()
		now := time.Now()
		var next time.Time
		for _, d := range heads {
			if busy[d.Channel] {
				continue
			}
			if t := notBefore[d.Channel]; now.Before(t) {
				if next.IsZero() || t.Before(next) {
					next = t
				}
				continue
			}
			attempts[d.Seq]++
			d.Attempt = attempts[d.Seq]
			busy[d.Channel] = true
			running++
			go func(d router.Delivery) { results <- result{d, c.Deliver(ctx, d)} }(d)
		}
		var timer <-chan time.Time
		var t *time.Timer
		if !next.IsZero() {
			t = time.NewTimer(next.Sub(now))
			timer = t.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-o.wake:
		case <-timer:
		case r := <-results:
			running--
			busy[r.d.Channel] = false
			if ctx.Err() != nil {
				return nil
			}
			if r.err == nil || router.IsPermanent(r.err) {
				o.mu.Lock()
				for i, d := range o.q {
					if d.Seq == r.d.Seq {
						o.q = append(o.q[:i], o.q[i+1:]...)
						break
					}
				}
				if r.err != nil {
					o.dropped = append(o.dropped, r.err)
				} else {
					o.acked++
				}
				o.mu.Unlock()
				delete(attempts, r.d.Seq)
			} else {
				notBefore[r.d.Channel] = time.Now().Add(o.retry(r.d.Attempt))
			}
		}
		if t != nil {
			t.Stop()
		}
	}
}

// Agent is a companion that answers every turn with one message,
// published to Out: Reply's text (nil: "re: " and the last message's
// text), as a reply to the message the turn answers when Quote is set.
type Agent struct {
	Out   *Outbox
	Reply func(t bridge.Turn, history []bridge.Inbound) string
	Quote bool
	// Owners are the owner's speaker ids.
	Owners map[string]bool

	mu       sync.Mutex
	stored   map[string][]bridge.Inbound // by channel
	ids      map[string]bridge.Inbound   // stored id → message
	turns    []bridge.Turn
	notes    []string
	quotes   map[string]string // reply key → the quoted platform id
	answered map[string]bool
	n        int
}

func (a *Agent) init() {
	if a.stored == nil {
		a.stored, a.ids, a.quotes, a.answered = map[string][]bridge.Inbound{}, map[string]bridge.Inbound{}, map[string]string{}, map[string]bool{}
	}
}

// Record implements bridge.Agent.
func (a *Agent) Record(_ context.Context, in bridge.Inbound) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init()
	for _, m := range a.stored[in.Channel] {
		if in.ExternalID != "" && m.ExternalID == in.ExternalID {
			return "", bridge.ErrDuplicate
		}
	}
	a.n++
	id := fmt.Sprintf("m%d", a.n)
	a.stored[in.Channel] = append(a.stored[in.Channel], in)
	a.ids[id] = in
	return id, nil
}

// Answer implements bridge.Agent: it publishes the answer at once.
func (a *Agent) Answer(_ context.Context, t bridge.Turn) error {
	a.mu.Lock()
	a.init()
	a.turns = append(a.turns, t)
	hist := append([]bridge.Inbound(nil), a.stored[t.Channel]...)
	a.n++
	key := fmt.Sprintf("r%d", a.n)
	if q, ok := a.ids[t.MessageID]; ok && a.Quote {
		a.quotes[key] = q.ExternalID
	}
	a.answered[t.MessageID] = true
	reply := a.Reply
	a.mu.Unlock()
	text := "re: "
	if len(hist) > 0 {
		text += hist[len(hist)-1].Text
	}
	if reply != nil {
		text = reply(t, hist)
	}
	if text == "" {
		return nil
	}
	a.Out.Publish(router.Packet{Key: key, Channel: t.Channel, Kind: router.KindReply, Text: text, ReplyTo: t.MessageID, Time: time.Now()})
	return nil
}

// Quoted implements bridge.Agent.
func (a *Agent) Quoted(id string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.quotes[id]
}

// Note implements bridge.Agent.
func (a *Agent) Note(_ context.Context, channel string, _ bridge.Kind, text string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notes = append(a.notes, channel+": "+text)
	return nil
}

// Owner implements bridge.Agent.
func (a *Agent) Owner(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.Owners[id]
}

// Answered implements bridge.Agent.
func (a *Agent) Answered(_, id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.answered[id]
}

// Stored is what a channel holds, oldest first.
func (a *Agent) Stored(channel string) []bridge.Inbound {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]bridge.Inbound(nil), a.stored[channel]...)
}

// Channels are the channels that hold messages.
func (a *Agent) Channels() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for c := range a.stored {
		out = append(out, c)
	}
	return out
}

// Turns are the turns run so far.
func (a *Agent) Turns() []bridge.Turn {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]bridge.Turn(nil), a.turns...)
}

// Notes are the notes so far, each "<channel>: <text>".
func (a *Agent) Notes() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.notes...)
}

// NotesAbout are the notes of a channel containing s.
func (a *Agent) NotesAbout(channel, s string) []string {
	var out []string
	for _, n := range a.Notes() {
		if strings.HasPrefix(n, channel+": ") && strings.Contains(n, s) {
			out = append(out, n)
		}
	}
	return out
}

// Logs are a bridge's durable logs in memory, kept across the bridge's
// restarts as the store keeps them across the daemon's: pass them to
// each bridge.New of the same bridge.
type Logs struct {
	mu          sync.Mutex
	sent        map[string]string
	moves       map[string]string
	undelivered []bridge.Undelivered
}

// Sent is the sent log (bridge.SentLog).
func (l *Logs) Sent() bridge.SentLog { return sentLog{l} }

// Moves is the move log (bridge.MoveLog).
func (l *Logs) Moves() bridge.MoveLog { return moveLog{l} }

// Undelivered is the log of replies given up or unconfirmed
// (bridge.UndeliveredLog), unbounded.
func (l *Logs) Undelivered() bridge.UndeliveredLog { return undeliveredLog{l} }

// AllUndelivered is everything the undelivered log got.
func (l *Logs) AllUndelivered() []bridge.Undelivered {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]bridge.Undelivered(nil), l.undelivered...)
}

type sentLog struct{ l *Logs }

func (s sentLog) Sent(key string) (string, bool) {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	id, ok := s.l.sent[key]
	return id, ok
}

func (s sentLog) MarkSent(key, id string) error {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	if s.l.sent == nil {
		s.l.sent = map[string]string{}
	}
	s.l.sent[key] = id
	return nil
}

type moveLog struct{ l *Logs }

func (m moveLog) Moves() (map[string]string, error) {
	m.l.mu.Lock()
	defer m.l.mu.Unlock()
	out := map[string]string{}
	for k, v := range m.l.moves {
		out[k] = v
	}
	return out, nil
}

func (m moveLog) Move(from, to string) error {
	m.l.mu.Lock()
	defer m.l.mu.Unlock()
	if m.l.moves == nil {
		m.l.moves = map[string]string{}
	}
	m.l.moves[from] = to
	return nil
}

type undeliveredLog struct{ l *Logs }

func (u undeliveredLog) Add(x bridge.Undelivered) error {
	u.l.mu.Lock()
	defer u.l.mu.Unlock()
	u.l.undelivered = append(u.l.undelivered, x)
	return nil
}

func (u undeliveredLog) List() ([]bridge.Undelivered, error) { return u.l.AllUndelivered(), nil }
