package bridge

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/store"
)

// ChatEvents is what a Sink offers for the chats the bot may not write to
// and the chats that move. The bridge's sink implements it; an adapter
// checks with a type assertion.
type ChatEvents interface {
	// Muted reports the bot muted in the group until until (zero: until
	// it is lifted): OneBot's group_ban notice for the bot's own id.
	Muted(chat Chat, until time.Time)
	// Unmuted reports the bot's mute lifted (group_ban lift_ban).
	Unmuted(chat Chat)
	// Moved reports that the platform moved the chat to the id to (a
	// Telegram group upgraded to a supergroup: migrate_to_chat_id).
	Moved(from Chat, to string)
}

// How long a chat's answers wait for a mute of the bot to end.
const (
	// MuteHoldMax is the longest an answer is held for a mute: one whose
	// mute ends later (or has not ended by then) is given up, listed
	// with why, and the model told.
	MuteHoldMax = time.Hour
	// muteProbe is the first wait before trying again a chat whose mute
	// has no known end (Telegram: "not enough rights"; a QQ send refused
	// while muted); it doubles for each refusal, to muteProbeMax.
	muteProbe    = time.Minute
	muteProbeMax = 16 * time.Minute
)

// muteState is one chat's mute of the bot.
type muteState struct {
	until  time.Time // zero: unknown; tried again after probe
	probe  time.Time // when to try again (unknown end)
	tries  int       // refusals in a row while the end is unknown
	at     time.Time // when it was last set
	why    string
	lifted chan struct{} // closed when lifted
}

// mutes are the chats where the bot may not write now.
type mutes struct {
	mu sync.Mutex
	m  map[Chat]*muteState
}

func muteKey(c Chat) Chat { return Chat{Kind: c.Kind, ID: c.ID} }

// set records a mute of c until until (zero: unknown) and reports the
// state.
func (ms *mutes) set(c Chat, now, until time.Time, why string) *muteState {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.m == nil {
		ms.m = map[Chat]*muteState{}
	}
	k := muteKey(c)
	s := ms.m[k]
	if s == nil {
		s = &muteState{lifted: make(chan struct{})}
		ms.m[k] = s
	}
	s.until, s.why, s.at = until, why, now
	if until.IsZero() {
		s.probe = now.Add(min(muteProbe<<s.tries, muteProbeMax))
		s.tries++
	}
	return s
}

// lift ends c's mute.
func (ms *mutes) lift(c Chat) bool {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	k := muteKey(c)
	s := ms.m[k]
	if s == nil {
		return false
	}
	close(s.lifted)
	delete(ms.m, k)
	return true
}

// proved ends c's mute of unknown end when a send begun at began, after
// the mute was set, went through: the bot may write again. A mute with a
// known end, or one set while the send was under way, stays.
func (ms *mutes) proved(c Chat, began time.Time) {
	ms.mu.Lock()
	s := ms.m[muteKey(c)]
	ok := s != nil && s.until.IsZero() && s.at.Before(began)
	ms.mu.Unlock()
	if ok {
		ms.lift(c)
	}
}

// get is c's mute, nil when none.
func (ms *mutes) get(c Chat) *muteState {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.m[muteKey(c)]
}

// count is how many chats hold the bot muted at now (a mute whose end
// passed is not counted).
func (ms *mutes) count(now time.Time) int {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	n := 0
	for _, s := range ms.m {
		if s.until.IsZero() || now.Before(s.until) {
			n++
		}
	}
	return n
}

// errHeld is an answer given up because its chat's mute outlasts
// MuteHoldMax.
type errHeld struct {
	why   string
	until time.Time
}

func (e *errHeld) Error() string {
	if e.until.IsZero() {
		return fmt.Sprintf("the bot may not write in this chat (%s); held %s, given up", e.why, MuteHoldMax)
	}
	return fmt.Sprintf("the bot may not write in this chat until %s (%s), longer than the %s an answer is held", e.until.Format(time.DateTime), e.why, MuteHoldMax)
}

// holdWhileMuted waits while the bot is muted in chat: until the mute is
// lifted or ends (known end), or until it is time to try again (unknown
// end: the next send finds out, and a refusal mutes again with a longer
// wait). It returns an *errHeld once the packet, said at said, has waited
// MuteHoldMax.
func (b *Bridge) holdWhileMuted(ctx context.Context, chat Chat, said time.Time) error {
	for {
		s := b.mutes.get(chat)
		if s == nil {
			return nil
		}
		now := b.clock.Now()
		if said.IsZero() || said.After(now) {
			said = now
		}
		deadline := said.Add(MuteHoldMax)
		end := s.until
		if end.IsZero() {
			end = s.probe
		}
		if !now.Before(end) {
			if !s.until.IsZero() {
				b.mutes.lift(chat) // it ended by itself
			}
			return nil // try: a refusal mutes again
		}
		if !now.Before(deadline) {
			// (a mute that ends later may still be lifted early: the
			// answer waits its whole hold first)
			return &errHeld{why: s.why, until: s.until}
		}
		b.log.Info("the bot is muted here; the chat's answers wait", "channel", chat.Channel(b.name), "until", end)
		wait := min(end.Sub(now), deadline.Sub(now))
		select {
		case <-s.lifted:
		case <-ctx.Done():
			return ctx.Err()
		case <-b.clock.After(wait):
		}
	}
}

// muted and unmuted are the sink's ChatEvents.
func (s sink) Muted(chat Chat, until time.Time) {
	b := s.b
	chat = b.canonical(chat)
	why := "muted by a group admin"
	b.mutes.set(chat, b.clock.Now(), until, why)
	b.log.Info("the bot was muted in a group; its answers there wait", "channel", chat.Channel(b.name), "until", until)
}

func (s sink) Unmuted(chat Chat) {
	b := s.b
	chat = b.canonical(chat)
	if b.mutes.lift(chat) {
		b.log.Info("the bot's mute was lifted; the held answers go", "channel", chat.Channel(b.name))
	}
}

func (s sink) Moved(from Chat, to string) { s.b.move(from, to) }

// MoveLog keeps the chats a platform moved to a new id (a Telegram group
// upgraded to a supergroup), across restarts: the conversation keeps its
// first channel, whose new id is an alias.
type MoveLog interface {
	// Moves lists every move: old chat id → new chat id.
	Moves() (map[string]string, error)
	// Move records one.
	Move(from, to string) error
}

// StoreMoves is the move log of one bridge in the store (brg\x00moved\x00
// <bridge>\x00<old id> → the new id), kept for good: a channel's alias
// lasts as long as its history.
type StoreMoves struct {
	db     *badger.DB
	prefix string
}

// NewStoreMoves opens the move log of the named bridge.
func NewStoreMoves(st *store.Store, bridge string) *StoreMoves {
	return &StoreMoves{db: st.DB(), prefix: store.PrefixBridge + "moved\x00" + bridge + "\x00"}
}

// Moves implements MoveLog.
func (s *StoreMoves) Moves() (map[string]string, error) {
	out := map[string]string{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(s.prefix), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			from := strings.TrimPrefix(string(it.Item().Key()), s.prefix)
			if err := it.Item().Value(func(v []byte) error { out[from] = string(v); return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bridge: moved chats: %w", err)
	}
	return out, nil
}

// Move implements MoveLog.
func (s *StoreMoves) Move(from, to string) error {
	return s.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(s.prefix+from), []byte(to)) })
}

// memMoves is a move log in memory.
type memMoves struct {
	mu sync.Mutex
	m  map[string]string
}

func (m *memMoves) Moves() (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for k, v := range m.m {
		out[k] = v
	}
	return out, nil
}

func (m *memMoves) Move(from, to string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]string{}
	}
	m.m[from] = to
	return nil
}

// aliases are the bridge's moved chats in both directions: to (the
// channel's first id → where it lives now) and from (the new id → the
// channel's first id).
type aliases struct {
	mu       sync.Mutex
	to, from map[string]string
}

func (a *aliases) load(m map[string]string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.to, a.from = map[string]string{}, map[string]string{}
	for old, cur := range m {
		a.add(old, cur)
	}
}

// add records old → cur; the caller holds a.mu. A chat that moves again
// keeps its first id.
func (a *aliases) add(old, cur string) string {
	if a.to == nil {
		a.to, a.from = map[string]string{}, map[string]string{}
	}
	if first, ok := a.from[old]; ok {
		old = first
	}
	if old == cur {
		return old
	}
	if prev, ok := a.to[old]; ok {
		delete(a.from, prev)
	}
	a.to[old], a.from[cur] = cur, old
	return old
}

// canonical is the chat under its channel's id (the id it had when the
// conversation began): a message from a moved chat's new id belongs to the
// old channel.
func (b *Bridge) canonical(c Chat) Chat {
	if c.Kind != Group {
		return c
	}
	b.aliases.mu.Lock()
	defer b.aliases.mu.Unlock()
	if old, ok := b.aliases.from[c.ID]; ok {
		c.ID = old
	}
	return c
}

// target is where a channel's chat lives now on the platform.
func (b *Bridge) target(c Chat) Chat {
	if c.Kind != Group {
		return c
	}
	b.aliases.mu.Lock()
	defer b.aliases.mu.Unlock()
	if cur, ok := b.aliases.to[c.ID]; ok {
		c.ID = cur
	}
	return c
}

// move records that the group from now lives at the id to: its channel,
// history, memory and settings stay those of its first id; messages from
// the new id join them and answers go there.
func (b *Bridge) move(from Chat, to string) {
	if from.Kind != Group || to == "" || from.ID == to {
		return
	}
	b.aliases.mu.Lock()
	first := from.ID
	if f, ok := b.aliases.from[first]; ok {
		first = f
	}
	if b.aliases.to[first] == to {
		b.aliases.mu.Unlock()
		return // known already (the error and the service message both say)
	}
	old := b.aliases.add(from.ID, to)
	b.aliases.mu.Unlock()
	if err := b.moves.Move(old, to); err != nil {
		b.log.Warn("could not keep a chat's move; after a restart its new id would be a new channel", "from", old, "to", to, "err", err)
	}
	b.log.Info("the chat moved to a new id; the conversation keeps its channel", "channel", Chat{Kind: Group, ID: old}.Channel(b.name), "now", to)
}

// loadMoves reads the move log into the aliases.
func (b *Bridge) loadMoves() {
	m, err := b.moves.Moves()
	if err != nil {
		b.log.Warn("could not read the moved chats", "err", err)
		return
	}
	b.aliases.load(m)
}

// SyntheticID reports whether a message id was made by cyan rather than
// given by the platform — "poke-…", "notice-…": a word and a dash. No
// platform message has it, so an answer never replies to it.
func SyntheticID(id string) bool {
	word, _, ok := strings.Cut(id, "-")
	if !ok || word == "" {
		return false
	}
	for _, r := range word {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}
