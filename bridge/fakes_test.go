package bridge

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/router"
)

// fakeAgent records what the bridge asks of the companion; Answer blocks
// on gate when set.
type fakeAgent struct {
	mu     sync.Mutex
	stored []Inbound
	turns  []Turn
	notes  []string
	owners map[string]bool
	gate   chan struct{}
	ext    map[string]bool
	quotes map[string]string // stored id → the quoted message's platform id
	later  []error           // Answer's next results, one each
	// answered are the stored ids a turn answered (Answered).
	answered map[string]bool
}

func (a *fakeAgent) Answered(_, id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.answered[id]
}

func (a *fakeAgent) Record(_ context.Context, in Inbound) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ext == nil {
		a.ext = map[string]bool{}
	}
	k := in.Channel + "/" + in.ExternalID
	if in.ExternalID != "" && a.ext[k] {
		return "", ErrDuplicate
	}
	a.ext[k] = true
	a.stored = append(a.stored, in)
	return fmt.Sprintf("m%d", len(a.stored)), nil
}

func (a *fakeAgent) Answer(ctx context.Context, t Turn) error {
	a.mu.Lock()
	a.turns = append(a.turns, t)
	gate := a.gate
	if len(a.later) > 0 {
		err := a.later[0]
		a.later = a.later[1:]
		a.mu.Unlock()
		return err
	}
	a.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	return nil
}

func (a *fakeAgent) Note(_ context.Context, channel string, _ Kind, text string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notes = append(a.notes, channel+": "+text)
	return nil
}

func (a *fakeAgent) Quoted(id string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.quotes[id]
}

func (a *fakeAgent) Owner(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.owners[id]
}

func (a *fakeAgent) snapshot() ([]Inbound, []Turn, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Inbound(nil), a.stored...), append([]Turn(nil), a.turns...), append([]string(nil), a.notes...)
}

// memRouter is the router's outbox of one component, in memory, with
// the router's rules: the head packet is offered until Deliver returns nil
// or a Permanent error; a temporary error offers it again after a backoff
// (1 s doubling), before anything after it.
type memRouter struct {
	mu      sync.Mutex
	q       []router.Delivery
	seq     uint64
	wake    chan struct{}
	dropped []error // the Permanent errors
	offers  int
	fail    error // returned by the next attach, once
}

func newMemRouter() *memRouter { return &memRouter{wake: make(chan struct{}, 1)} }

// push queues the parts of one answer (ReplyTo replyTo) to channel.
func (o *memRouter) push(channel, replyTo string, texts ...string) {
	for i, t := range texts {
		o.mu.Lock()
		key := fmt.Sprint("out", o.seq+1)
		o.mu.Unlock()
		o.pushPacket(router.Packet{Key: key, Channel: channel, Kind: router.KindReply, Text: t, ReplyTo: replyTo, Part: i})
	}
}

func (o *memRouter) pushPacket(p router.Packet) {
	o.mu.Lock()
	o.seq++
	o.q = append(o.q, router.Delivery{Packet: p, Seq: o.seq})
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *memRouter) attach(ctx context.Context, c router.Component) error {
	o.mu.Lock()
	if err := o.fail; err != nil {
		o.fail = nil
		o.mu.Unlock()
		return err
	}
	o.mu.Unlock()
	attempt, last := 0, uint64(0)
	for {
		o.mu.Lock()
		if len(o.q) == 0 {
			o.mu.Unlock()
			select {
			case <-o.wake:
				continue
			case <-ctx.Done():
				return nil
			}
		}
		d := o.q[0]
		o.offers++
		o.mu.Unlock()
		if d.Seq != last {
			attempt, last = 0, d.Seq
		}
		attempt++
		d.Attempt = attempt
		err := c.Deliver(ctx, d)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil || router.IsPermanent(err) {
			o.mu.Lock()
			o.q = o.q[1:]
			if err != nil {
				o.dropped = append(o.dropped, err)
			}
			o.mu.Unlock()
			continue
		}
		select {
		case <-time.After(time.Second << min(attempt-1, 6)):
		case <-ctx.Done():
			return nil
		}
	}
}

func (o *memRouter) pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.q)
}

// fakeAdapter is a platform driven by the test.
type fakeAdapter struct {
	self  User
	sink  chan Sink
	mu    sync.Mutex
	sent  []string
	typed int
	fail  error // returned by the next Send, once
	n     int
	// notify, when set, gets every message sent.
	notify chan string
}

func newFakeAdapter() *fakeAdapter {
	return &fakeAdapter{self: User{ID: "100", Name: "bot"}, sink: make(chan Sink, 1)}
}

func (f *fakeAdapter) Platform() string { return "fake" }

func (f *fakeAdapter) Run(ctx context.Context, s Sink) error {
	f.sink <- s
	<-ctx.Done()
	return nil
}

func (f *fakeAdapter) Send(_ context.Context, c Chat, m Outgoing) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail; err != nil {
		f.fail = nil
		return "", err
	}
	f.n++
	var b []byte
	for _, p := range m.Parts {
		switch p.Kind {
		case PartText:
			b = append(b, p.Text...)
		case PartMention:
			b = append(b, "<at "+p.UserID+">"...)
		case PartReply:
			b = append(b, "<reply "+p.MessageID+">"...)
		case PartVoice:
			b = append(b, "<voice "+string(p.Audio)+">"...)
		}
	}
	f.sent = append(f.sent, c.Channel("t")+" "+string(b))
	if f.notify != nil {
		f.notify <- c.Channel("t") + " " + string(b)
	}
	return fmt.Sprint("s", f.n), nil
}

func (f *fakeAdapter) Typing(context.Context, Chat) error {
	f.mu.Lock()
	f.typed++
	f.mu.Unlock()
	return nil
}

func (f *fakeAdapter) sentSoFar() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sent...)
}

// rig is a bridge with fakes around it, run inside a synctest bubble.
type rig struct {
	t      *testing.T
	b      *Bridge
	agent  *fakeAgent
	out    *memRouter
	ad     *fakeAdapter
	sink   Sink
	cancel context.CancelFunc
	done   chan error
}

func newRig(t *testing.T, tweak func(*Options)) *rig {
	t.Helper()
	r := &rig{t: t, agent: &fakeAgent{owners: map[string]bool{}}, out: newMemRouter(), ad: newFakeAdapter()}
	o := Options{Name: "t", Adapter: r.ad, Agent: r.agent, Attach: r.out.attach, Queue: r.out.pending, Manners: testManners(),
		AgentName: func() string { return "cyan" }}
	if tweak != nil {
		tweak(&o)
	}
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	r.b = b
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- b.Run(ctx) }()
	r.sink = <-r.ad.sink
	r.sink.Connected(r.ad.self)
	return r
}

func (r *rig) stop() {
	r.cancel()
	if err := <-r.done; err != nil {
		r.t.Errorf("Run: %v", err)
	}
}

var msgN int

func (r *rig) say(c Chat, from User, parts ...Part) string {
	msgN++
	id := fmt.Sprint(msgN)
	r.sink.Inbound(context.Background(), &Message{Chat: c, From: from, ID: id, Parts: parts, Time: time.Now()})
	return id
}

func text(s string) Part { return Part{Kind: PartText, Text: s} }
