package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/router"
)

// Options configure New.
type Options struct {
	// Name is the bridge's name: the prefix of its channels and speaker ids.
	Name    string
	Adapter Adapter
	Agent   Agent
	// Attach receives the outgoing packets of the bridge's channels: it
	// hands them to c, oldest first, until ctx ends — the router's Attach
	// under the bridge's subscription (router.Router.Attach).
	Attach func(ctx context.Context, c router.Component) error
	// Sent remembers what was sent, across restarts (nil: in memory only).
	Sent SentLog
	// Owed keeps the turns owed to chats across restarts (nil: in memory
	// only); ResumeMaxAge is how old one may be and still run at start (0:
	// DefaultResumeMaxAge; negative: none runs).
	Owed         OwedLog
	ResumeMaxAge time.Duration
	// Who keeps who wrote to the bot privately (nil: in memory only).
	Who WhoLog
	// Undelivered keeps the replies given up (nil: in memory only).
	Undelivered UndeliveredLog
	// Queue counts the outgoing packets waiting (nil: none known).
	Queue func() int
	// Journal gets the bridge's state changes (journal.BridgeState; nil:
	// none).
	Journal *journal.Journal
	Manners config.Manners
	// AgentName is the persona's current name, one of the names the bot
	// answers to.
	AgentName func() string
	// DataDir is where images are kept ("" keeps none).
	DataDir string
	Clock   clock.Clock    // nil: the real clock
	Rand    func() float64 // the chime-in's dice; nil: math/rand/v2
	Logger  *slog.Logger   // nil: discard
	// MediaBudget bounds the downloads of one incoming message's media,
	// all fetched at once (0: DefaultMediaBudget): what has not arrived by
	// then is named as not downloaded.
	MediaBudget time.Duration
	// Stored, if set, is called once an incoming message is durable, with
	// its platform id (benchmarks measure event → stored with it).
	Stored func(chat Chat, msgID string)
	// DiskFree reports the free space of the data dir's disk (nil: not
	// checked); an image is kept only while MediaFloor bytes stay free
	// after it (the daemon: store.min_free_mb + MediaHeadroom), else it
	// is named "not saved: disk low".
	DiskFree   func() (uint64, error)
	MediaFloor uint64
	// Moves keeps the chats the platform moved to a new id (nil: in
	// memory only).
	Moves MoveLog
	// SendTimeout bounds one send the adapter has begun, over the
	// adapter's own bound (0: DefaultSendTimeout).
	SendTimeout time.Duration
	// SilentAfter is how long a connected bridge whose chats were busy may
	// hear nothing before it is probed and flagged (0:
	// DefaultSilentAfter; negative: never).
	SilentAfter time.Duration
	// Alert tells the owner, on another channel, that this bridge's
	// account went offline (nil: the log and the status only).
	Alert func(text string)
	// Paused keeps the chats where the owner paused unasked speech
	// (/pause) across restarts (nil: in memory only).
	Paused PauseLog
	// Voiced reports the chats whose replies are voiced (tts.channels;
	// nil: none), and Voice makes a reply's voice message in the format
	// the adapter takes (VoiceSender). VoiceMode says what a voiced chat
	// gets: VoiceBoth (""), VoiceOnly or VoiceText.
	Voiced    func(channel string) bool
	Voice     func(ctx context.Context, channel, text, format string) ([]byte, error)
	VoiceMode string
}

// DefaultSendTimeout bounds a send the adapter has begun. Each adapter
// waits the platform's own time first (OneBot: the call timeout, 15 s by
// default, over NapCat's 10 s; Telegram: its request timeout); this only
// keeps a send whose adapter never answers from holding its chat for ever.
const DefaultSendTimeout = 2 * time.Minute

// Bridge runs one adapter with the group-chat manners. See the package doc.
type Bridge struct {
	name         string
	adapter      Adapter
	agent        Agent
	attach       func(context.Context, router.Component) error
	keys         sentKeys
	flights      Flights
	catching     catching
	owed         OwedLog
	resumeMaxAge time.Duration
	queue        func() int
	journal      *journal.Journal
	manners      config.Manners
	lists        lists
	quiet        quiet
	images       *imageKeeper
	agentNm      func() string
	clock        clock.Clock
	rand         func() float64
	log          *slog.Logger
	stored       func(Chat, string)

	who     WhoLog
	whoMu   sync.Mutex
	whoSeen map[string]time.Time

	limit       Limit // the platform's message limit (Max 0: none)
	undelivered UndeliveredLog
	sendTimeout time.Duration

	mutes   mutes   // chats where the bot may not write now
	aliases aliases // chats the platform moved
	moves   MoveLog

	roster roster
	seen   idSet // incoming message ids (chat + id), for duplicates
	media  mediaHolds
	// recalledEarly are recalls of messages not stored yet (held for
	// their media): marked once stored.
	recalledEarly idSet
	budget        time.Duration
	sent          idSet // ids of the bot's own messages (chat + id), for replies to it; see ownMessage

	mu    sync.Mutex
	chats map[Chat]*chatState
	users map[string]*window       // per speaker: turns they triggered
	ctx   context.Context          // Run's, for the turns it starts
	wg    sync.WaitGroup           // the goroutines Run started
	prev  map[string]router.Packet // per channel: the last packet sent, for the pause between parts

	voiced    func(string) bool
	voice     func(ctx context.Context, channel, text, format string) ([]byte, error)
	voiceMode string
	voices    map[Chat]*voiceJob // under mu: per chat, the voice being made (VoiceBoth)
	stale     []OwedTurn         // owed turns too old to resume at start

	conn   sync.Mutex
	online chan struct{} // closed while connected
	st     Status

	postMu   sync.Mutex
	posted   journal.State // the last state posted
	postedAt time.Time
	selfUser atomic.Pointer[User]

	received, storedN, skipped, turns, sent_, failed, unknown atomic.Uint64

	silentAfter time.Duration
	alert       func(string)
	hearing     hearing
	asked       idSet // incoming messages that asked for a turn (chat + id)
	// ownSent maps the platform ids of the bot's messages to their keys,
	// for a recall of or a reply to one, when the sent log is no SentIDs.
	ownSent  ownSent
	paused   pausedChats // chats where the owner paused unasked speech
	pauseLog PauseLog
}

// Status is a bridge's state, for `cyan bridges` and doctor.
type Status struct {
	Name      string `json:"name"`
	Platform  string `json:"platform"`
	Connected bool   `json:"connected"`
	// State is set when the bridge cannot work until its configuration
	// changes: "failed: wrong access_token".
	State     string    `json:"state,omitempty"`
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
	// Unknown counts the replies handed to the platform that it never
	// confirmed: not sent again (one late message is better than two).
	Unknown uint64 `json:"unknown,omitempty"`
	// Muted is how many chats hold the bot muted: their answers wait.
	Muted int `json:"muted,omitempty"`
	// Stale are turns a restart cut that were too old to run at start
	// (bridges.resume_max_age): they wait for the chat's next turn.
	Stale []OwedTurn `json:"stale,omitempty"`
	// Writers are who wrote to the bot privately, newest first: how the
	// owner finds their own id (`cyan bridges who`).
	Writers []Writer `json:"writers,omitempty"`
	// Undelivered are the latest replies given up, newest last.
	Undelivered []Undelivered `json:"undelivered,omitempty"`
	// Offline: the connection is up but the platform logged the account
	// out (State says why); answers wait until it is back.
	Offline bool `json:"offline,omitempty"`
	// Silent is set while a connected bridge whose chats were busy has
	// heard nothing for bridges.silent_after: what the probe found.
	Silent string `json:"silent,omitempty"`
}

// New checks the options and builds the bridge.
func New(o Options) (*Bridge, error) {
	switch {
	case o.Name == "":
		return nil, errors.New("bridge: no name")
	case o.Adapter == nil || o.Agent == nil || o.Attach == nil:
		return nil, fmt.Errorf("bridge %s: adapter, agent and attach are required", o.Name)
	}
	q, err := parseQuiet(o.Manners.QuietHours)
	if err != nil {
		return nil, err
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Sent == nil {
		o.Sent = newMemSent(4096)
	}
	if o.Undelivered == nil {
		o.Undelivered = &memUndelivered{}
	}
	if o.Who == nil {
		o.Who = &memWho{}
	}
	if o.Owed == nil {
		o.Owed = newMemOwed()
	}
	if o.Moves == nil {
		o.Moves = &memMoves{}
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = DefaultSendTimeout
	}
	if o.ResumeMaxAge == 0 {
		o.ResumeMaxAge = DefaultResumeMaxAge
	}
	if o.Queue == nil {
		o.Queue = func() int { return 0 }
	}
	if o.AgentName == nil {
		o.AgentName = func() string { return "" }
	}
	b := &Bridge{
		name: o.Name, adapter: o.Adapter, agent: o.Agent, attach: o.Attach, owed: o.Owed, who: o.Who, undelivered: o.Undelivered, whoSeen: map[string]time.Time{}, resumeMaxAge: o.ResumeMaxAge, queue: o.Queue, journal: o.Journal, manners: o.Manners,
		lists: listsOf(o.Manners), quiet: q, agentNm: o.AgentName, clock: o.Clock, rand: o.Rand, log: o.Logger,
		stored: o.Stored, chats: map[Chat]*chatState{}, voices: map[Chat]*voiceJob{}, users: map[string]*window{}, online: make(chan struct{}),
		images: newImageKeeper(o.DataDir, o.Name, o.Manners.ImageMaxBytes, o.Manners.ImagesMaxBytes),
		seen:   newIDSet(8192), sent: newIDSet(4096), recalledEarly: newIDSet(1024), budget: o.MediaBudget,
		moves: o.Moves, sendTimeout: o.SendTimeout, prev: map[string]router.Packet{},
	}
	b.loadMoves()
	if b.budget <= 0 {
		b.budget = DefaultMediaBudget
	}
	if b.images != nil {
		b.images.log = o.Logger
		b.images.chatQuota = o.Manners.ChatImagesMaxBytes
		b.images.free, b.images.floor = o.DiskFree, o.MediaFloor
	}
	if l, ok := o.Adapter.(Limited); ok {
		b.limit = l.Limit()
	}
	b.silentAfter, b.alert, b.pauseLog = o.SilentAfter, o.Alert, o.Paused
	b.voiced, b.voice, b.voiceMode = o.Voiced, o.Voice, o.VoiceMode
	b.loadPaused()
	if b.silentAfter == 0 {
		b.silentAfter = DefaultSilentAfter
	}
	b.asked = newIDSet(4096)
	if k, ok := o.Sent.(sentKeys); ok {
		b.keys = k
	} else {
		b.keys = &recordingSent{SentLog: o.Sent, own: &b.ownSent}
	}
	b.flights = noFlights{}
	if f, ok := o.Sent.(Flights); ok {
		b.flights = f
	}
	b.st = Status{Name: o.Name, Platform: o.Adapter.Platform()}
	return b, nil
}

// Name is the bridge's name.
func (b *Bridge) Name() string { return b.name }

// Run keeps the adapter connected and takes the outgoing packets of the
// bridge's channels from the router until ctx ends; then it finishes the
// send in flight (the connection closes after it), and waits for the
// turns it started. At start it runs the turns a restart cut (resume). It returns nil when ctx ends, or the first error of
// the adapter (one it cannot recover from: a wrong token) or of the
// router; a panic in either is returned as an error, so the supervisor
// restarts the bridge.
func (b *Bridge) Run(ctx context.Context) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.mu.Lock()
	b.ctx = ctx
	b.mu.Unlock()
	b.resume()
	b.post("connecting", nil)
	defer func() {
		if err != nil {
			b.post("failed", err)
		} else {
			b.post("stopped", nil)
		}
	}()
	// The connection outlives the outbox by the send in flight: stopping,
	// the outbox finishes the message it is sending (bounded by
	// the adapter's own timeout) before the connection closes, so the platform's answer
	// (its message id) is not lost and the restart does not send it again.
	actx, acancel := context.WithCancel(context.WithoutCancel(ctx))
	defer acancel()
	adapterDone, outboxDone := make(chan error, 1), make(chan error, 1)
	b.goErr("adapter", adapterDone, func() error { return b.adapter.Run(actx, sink{b}) })
	b.goErr("outbox", outboxDone, func() error { return b.attach(ctx, b) })
	b.goSafe("silence watch", func() { b.watchSilence(ctx) })
	select {
	case err = <-adapterDone:
		cancel()
		<-outboxDone
	case err = <-outboxDone:
		cancel()
		acancel()
		<-adapterDone
	case <-ctx.Done():
		err = <-outboxDone
		acancel()
		if aerr := <-adapterDone; err == nil {
			err = aerr
		}
	}
	cancel()
	acancel()
	b.wg.Wait()
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled)) && !errors.Is(err, errPanic) {
		err = nil
	}
	b.conn.Lock()
	if b.st.Connected {
		b.online = make(chan struct{})
	}
	b.st.Connected = false
	b.conn.Unlock()
	if err != nil {
		return fmt.Errorf("bridge %s: %w", b.name, err)
	}
	return nil
}

var errPanic = errors.New("panicked")

// goErr runs f in a goroutine Run joins and sends its result, or a panic
// as an error, to errc.
func (b *Bridge) goErr(what string, errc chan<- error, f func() error) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer func() {
			if v := recover(); v != nil {
				b.log.Error("bridge part panicked", "part", what, "panic", v, "stack", string(debug.Stack()))
				errc <- fmt.Errorf("%s %w: %v", what, errPanic, v)
			}
		}()
		errc <- f()
	}()
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

// post puts a state change on the journal (journal.BridgeState): connecting,
// connected, disconnected, stopped or failed, with the error that caused
// it. The sink's calls post under b.conn, so the order is the order the
// adapter reported. Repeats
// of the same state and error are not posted, nor more than one problem
// (an error that left the state as it was) a minute.
func (b *Bridge) post(state string, err error) {
	if b.journal == nil {
		return
	}
	st := journal.State{Name: b.name, State: state}
	if err != nil {
		st.Error = err.Error()
	}
	now := b.clock.Now()
	b.postMu.Lock()
	defer b.postMu.Unlock()
	if st == b.posted || (st.State == b.posted.State && now.Sub(b.postedAt) < time.Minute) {
		return
	}
	b.posted, b.postedAt = st, now
	e := journal.New(journal.BridgeState, "", st)
	e.Origin = "bridge:" + b.name
	b.journal.Post(e)
}

// Status reports the bridge's state.
func (b *Bridge) Status() Status {
	b.conn.Lock()
	s := b.st
	b.conn.Unlock()
	s.Chats = b.roster.count()
	s.Queue = b.queue()
	s.Received, s.Stored, s.Skipped = b.received.Load(), b.storedN.Load(), b.skipped.Load()
	s.Turns, s.Sent, s.Failed = b.turns.Load(), b.sent_.Load(), b.failed.Load()
	s.Unknown, s.Muted = b.unknown.Load(), b.mutes.count(b.clock.Now())
	s.Undelivered = b.undeliveredList()
	s.Writers = b.writers()
	b.mu.Lock()
	s.Stale = append([]OwedTurn(nil), b.stale...)
	b.mu.Unlock()
	return s
}

// sink is the bridge as the adapter sees it.
type sink struct{ b *Bridge }

func (s sink) Inbound(ctx context.Context, m *Message) {
	s.b.heard()
	if m != nil {
		m.Chat = s.b.canonical(m.Chat)
	}
	s.b.accept(ctx, m)
}

func (s sink) Connected(self User) {
	if s.connected(self) {
		s.b.catchUpSoon()
	}
}

// connected records a connection; true when the bridge was not connected
// before (an adapter tells a connection more than once, as it learns the
// bot's name) and the account is online: what the chats said meanwhile
// is to be caught up on.
func (s sink) connected(self User) bool {
	b := s.b
	b.conn.Lock()
	defer b.conn.Unlock()
	b.selfUser.Store(&self)
	if b.st.Offline {
		// a connection, but the account is still logged out: it reads
		// as offline until the platform says it is back
		b.st.Self, b.st.SelfName = self.ID, self.Name
		return false
	}
	was := b.st.Connected
	if !was {
		close(b.online)
	}
	b.st.Connected, b.st.Self, b.st.SelfName, b.st.Since = true, self.ID, self.Name, b.clock.Now()
	b.st.State = ""
	if self.Username != "" && self.Name == "" {
		b.st.SelfName = self.Username
	}
	b.log.Info("bridge connected", "self", self.ID, "name", b.st.SelfName)
	b.post("connected", nil)
	return !was
}

func (s sink) Disconnected(err error) {
	b := s.b
	b.conn.Lock()
	defer b.conn.Unlock()
	if b.st.Connected {
		b.online = make(chan struct{})
	}
	b.st.Connected, b.st.Since, b.st.Offline, b.st.Silent = false, b.clock.Now(), false, ""
	if strings.HasPrefix(b.st.State, "offline: ") {
		b.st.State = "" // a new connection tells anew
	}
	if err != nil {
		b.st.LastError, b.st.ErrorAt = err.Error(), b.clock.Now()
		b.log.Warn("bridge disconnected", "err", err)
	}
	if st := authState(err); st != "" {
		b.st.State = st
		b.post("failed", err)
		return
	}
	b.post("disconnected", err)
}

func (s sink) Problem(err error) {
	b := s.b
	b.conn.Lock()
	b.st.LastError, b.st.ErrorAt = err.Error(), b.clock.Now()
	state := "disconnected"
	if b.st.Connected {
		state = "connected"
	}
	if st := authState(err); st != "" && !b.st.Connected {
		b.st.State, state = st, "failed"
	}
	b.post(state, err)
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

// sentKeys is the bridge's sent log: a caller's without SentIDs is
// wrapped in a recordingSent.
type sentKeys interface {
	SentLog
	SentIDs
}

// ownMessage reports whether the bot sent the message id in chat c: one
// sent since the start (b.sent), or one the sent log knows in that chat
// (a reply, an answer to a chat command, an alert: markOwn; across a
// restart for StoreSent). An error of the log is logged and taken as no.
func (b *Bridge) ownMessage(c Chat, id string) bool {
	if id == "" {
		return false
	}
	if b.sent.has(string(c.Kind) + ":" + c.ID + ":" + id) {
		return true
	}
	in, err := b.keys.SentIn(c.Channel(b.name), id)
	if err != nil {
		b.log.Warn("could not tell whether the bot sent a message", "channel", c.Channel(b.name), "message_id", id, "err", err)
	}
	return in
}

// markOwn records a message the bot sent outside the outbox (a chat
// command's answer, an alert) as its own: in memory, and in the sent log
// under the key "own:" + its platform id, so that a reply to it or its
// recall is known as the bot's after a restart too. The key names no
// stored message, so a recall finds none to mark. A failed write is
// logged: the message is then the bot's until a restart, as before.
func (b *Bridge) markOwn(c Chat, id string) {
	if id == "" {
		return
	}
	b.sent.add(string(c.Kind) + ":" + c.ID + ":" + id)
	if err := b.keys.MarkSentIn(c.Channel(b.name), "own:"+id, id); err != nil {
		b.log.Warn("could not keep the bot's message as its own", "channel", c.Channel(b.name), "message_id", id, "err", err)
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
