package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cyan-agent/cyan/config"
)

// Options configure New.
type Options struct {
	// Name is the bridge's name: the prefix of its channels and speaker ids.
	Name    string
	Adapter Adapter
	Agent   Agent
	Outbox  Outbox
	Manners config.Manners
	// AgentName is the persona's current name, one of the names the bot
	// answers to.
	AgentName func() string
	// DataDir is where images are kept ("" keeps none).
	DataDir string
	Clock   Clock          // nil: the real clock
	Rand    func() float64 // the chime-in's dice; nil: math/rand/v2
	Logger  *slog.Logger   // nil: discard
	// Stored, if set, is called once an incoming message is durable, with
	// its platform id (benchmarks measure event → stored with it).
	Stored func(chat Chat, msgID string)
}

// Bridge runs one adapter with the group-chat manners. See the package doc.
type Bridge struct {
	name    string
	adapter Adapter
	agent   Agent
	outbox  Outbox
	manners config.Manners
	lists   lists
	quiet   quiet
	images  *imageKeeper
	agentNm func() string
	clock   Clock
	rand    func() float64
	log     *slog.Logger
	stored  func(Chat, string)

	roster roster
	seen   idSet // incoming message ids (chat + id), for duplicates
	sent   idSet // ids of the bot's own messages, for replies to it

	mu    sync.Mutex
	chats map[Chat]*chatState
	users map[string]*window // per speaker: turns they triggered
	ctx   context.Context    // Run's, for the turns it starts
	wg    sync.WaitGroup     // the goroutines Run started

	conn     sync.Mutex
	online   chan struct{} // closed while connected
	st       Status
	selfUser atomic.Pointer[User]

	received, storedN, skipped, turns, sent_, failed atomic.Uint64
}

// Status is a bridge's state, for `cyan bridges` and doctor.
type Status struct {
	Name      string    `json:"name"`
	Platform  string    `json:"platform"`
	Connected bool      `json:"connected"`
	Self      string    `json:"self,omitempty"` // the bot's platform id
	SelfName  string    `json:"self_name,omitempty"`
	Since     time.Time `json:"since,omitzero"` // the last connect or disconnect
	LastError string    `json:"last_error,omitempty"`
	ErrorAt   time.Time `json:"error_at,omitzero"`
	Chats     int       `json:"chats"`
	Queue     int       `json:"queue"` // outgoing messages waiting
	Received  uint64    `json:"received"`
	Stored    uint64    `json:"stored"`
	Skipped   uint64    `json:"skipped"` // duplicates, the bot's own, denied, malformed
	Turns     uint64    `json:"turns"`
	Sent      uint64    `json:"sent"`
	Failed    uint64    `json:"failed"` // replies given up
}

// New checks the options and builds the bridge.
func New(o Options) (*Bridge, error) {
	switch {
	case o.Name == "":
		return nil, errors.New("bridge: no name")
	case o.Adapter == nil || o.Agent == nil || o.Outbox == nil:
		return nil, fmt.Errorf("bridge %s: adapter, agent and outbox are required", o.Name)
	}
	q, err := parseQuiet(o.Manners.QuietHours)
	if err != nil {
		return nil, err
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.AgentName == nil {
		o.AgentName = func() string { return "" }
	}
	b := &Bridge{
		name: o.Name, adapter: o.Adapter, agent: o.Agent, outbox: o.Outbox, manners: o.Manners,
		lists: listsOf(o.Manners), quiet: q, agentNm: o.AgentName, clock: o.Clock, rand: o.Rand, log: o.Logger,
		stored: o.Stored, chats: map[Chat]*chatState{}, users: map[string]*window{}, online: make(chan struct{}),
		images: newImageKeeper(o.DataDir, o.Name, o.Manners.ImageMaxBytes, o.Manners.ImagesMaxBytes),
		seen:   newIDSet(8192), sent: newIDSet(4096),
	}
	b.st = Status{Name: o.Name, Platform: o.Adapter.Platform()}
	return b, nil
}

// Name is the bridge's name.
func (b *Bridge) Name() string { return b.name }

// Run keeps the adapter connected and delivers the outgoing messages until
// ctx ends; then it waits for the turns it started. It returns nil when
// ctx ends, or the adapter's unrecoverable error.
func (b *Bridge) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.mu.Lock()
	b.ctx = ctx
	b.mu.Unlock()
	errc := make(chan error, 2)
	b.goSafe("adapter", func() { errc <- b.adapter.Run(ctx, sink{b}) })
	b.goSafe("deliver", func() { errc <- b.deliver(ctx) })
	err := <-errc
	cancel()
	b.wg.Wait()
	if ctx.Err() != nil && err != nil && errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// goSafe runs f in a goroutine Run joins, turning a panic into a log line.
func (b *Bridge) goSafe(what string, f func()) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer func() {
			if v := recover(); v != nil {
				b.log.Error("bridge part panicked", "part", what, "panic", v, "stack", string(debug.Stack()))
			}
		}()
		f()
	}()
}

// Status reports the bridge's state.
func (b *Bridge) Status() Status {
	b.conn.Lock()
	s := b.st
	b.conn.Unlock()
	s.Chats = b.roster.count()
	s.Queue = b.outbox.Pending()
	s.Received, s.Stored, s.Skipped = b.received.Load(), b.storedN.Load(), b.skipped.Load()
	s.Turns, s.Sent, s.Failed = b.turns.Load(), b.sent_.Load(), b.failed.Load()
	return s
}

// sink is the bridge as the adapter sees it.
type sink struct{ b *Bridge }

func (s sink) Inbound(ctx context.Context, m *Message) { s.b.inbound(ctx, m) }

func (s sink) Connected(self User) {
	b := s.b
	b.conn.Lock()
	defer b.conn.Unlock()
	if !b.st.Connected {
		close(b.online)
	}
	b.st.Connected, b.st.Self, b.st.SelfName, b.st.Since = true, self.ID, self.Name, b.clock.Now()
	if self.Username != "" && self.Name == "" {
		b.st.SelfName = self.Username
	}
	b.selfUser.Store(&self)
	b.log.Info("bridge connected", "self", self.ID, "name", b.st.SelfName)
}

func (s sink) Disconnected(err error) {
	b := s.b
	b.conn.Lock()
	defer b.conn.Unlock()
	if b.st.Connected {
		b.online = make(chan struct{})
	}
	b.st.Connected, b.st.Since = false, b.clock.Now()
	if err != nil {
		b.st.LastError, b.st.ErrorAt = err.Error(), b.clock.Now()
		b.log.Warn("bridge disconnected", "err", err)
	}
}

func (s sink) Problem(err error) {
	b := s.b
	b.conn.Lock()
	b.st.LastError, b.st.ErrorAt = err.Error(), b.clock.Now()
	b.conn.Unlock()
}

// waitOnline blocks until the adapter is connected.
func (b *Bridge) waitOnline(ctx context.Context) error {
	b.conn.Lock()
	ch := b.online
	b.conn.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// idSet remembers the last n ids.
type idSet struct {
	mu   sync.Mutex
	m    map[string]struct{}
	ring []string
	next int
}

func newIDSet(n int) idSet { return idSet{m: make(map[string]struct{}, n), ring: make([]string, n)} }

// add records id and reports whether it was new.
func (s *idSet) add(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[id]; ok {
		return false
	}
	if old := s.ring[s.next]; old != "" {
		delete(s.m, old)
	}
	s.ring[s.next] = id
	s.next = (s.next + 1) % len(s.ring)
	s.m[id] = struct{}{}
	return true
}

func (s *idSet) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[id]
	return ok
}

func (s *idSet) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}
