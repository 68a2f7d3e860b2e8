package memory

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/store"
)

// Time for decay counts per scope (SPEC §3): an item's Δt counts the
// agent's turns in the conversations the item is shown in, never every
// channel's turns. So a busy group does not fade what the owner said in
// private, and the owner's private talk does not fade a group's items.
//
// The scopes follow the visibility rule (Viewer): an item is shown in the
// conversation it came from, and the owner's own items also in every
// private conversation of the owner. The memory keeps, durably:
//
//   - for each channel, All: its answered turns, and Owner: those of them
//     that were the owner speaking in private;
//   - OwnerPrivate: the owner's private turns over all channels.
//
// An item's clock is then
//
//	not the owner's item:  T = All[its channel]
//	the owner's item:      T = OwnerPrivate + All[its channel] − Owner[its channel]
//
// (the owner's private turns everywhere, plus the other turns of the
// conversation it was said in — a group, when the owner said it there).
// R = 0.9^((T − last_T)/S) and every review use the item's own T; the
// global counter (Memory.Turn) still counts every turn, for the API.
type clocks struct {
	OwnerPrivate int64                   `json:"owner_private"`
	Channels     map[string]channelClock `json:"channels"`
}

// channelClock is one channel's turns: all of them, and the owner's
// private ones among them.
type channelClock struct {
	All   int64 `json:"all"`
	Owner int64 `json:"owner,omitempty"`
}

var keyClocks = []byte(store.PrefixMemory + "clocks")

// clockOf is the clock of an item of origin o. Callers hold m.mu.
func (m *Memory) clockOf(o Origin) int64 {
	c := m.clk.Channels[o.Channel]
	if o.Owner {
		return m.clk.OwnerPrivate + c.All - c.Owner
	}
	return c.All
}

// now is an item's current time on its own clock. Callers hold m.mu.
func (m *Memory) itemNow(it *Item) int64 { return m.clockOf(it.Origin) }

// tick counts one answered turn of d's conversation. Callers hold m.mu.
func (m *Memory) tick(d TurnDone) {
	if m.clk.Channels == nil {
		m.clk.Channels = map[string]channelClock{}
	}
	c := m.clk.Channels[d.Channel]
	c.All++
	if d.Owner && d.Private {
		c.Owner++
		m.clk.OwnerPrivate++
	}
	m.clk.Channels[d.Channel] = c
}

// ItemClock is an item's own turn counter now (see clocks).
func (m *Memory) ItemClock(id string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[id]
	if !ok {
		return 0, fmt.Errorf("%w %q", ErrNotFound, id)
	}
	return m.itemNow(it), nil
}

// loadClocks reads the scope clocks. A store written before they existed
// kept one global T for every item: its items are moved onto their own
// clocks with the same Δt they had, so nothing fades or recovers by the
// move. Callers hold no lock (Open).
func (m *Memory) loadClocks(txn *badger.Txn) (migrate bool, err error) {
	it, err := txn.Get(keyClocks)
	if errors.Is(err, badger.ErrKeyNotFound) {
		m.clk = clocks{Channels: map[string]channelClock{}}
		return true, nil
	}
	if err != nil {
		return false, err
	}
	err = it.Value(func(v []byte) error { return json.Unmarshal(v, &m.clk) })
	if err != nil {
		return false, fmt.Errorf("memory: load clocks: %w", err)
	}
	if m.clk.Channels == nil {
		m.clk.Channels = map[string]channelClock{}
	}
	return false, nil
}

// migrateClocks rebases every item's last_T from the global T onto its
// own clock (all clocks start at 0), keeping Δt. Callers hold m.mu.
func (m *Memory) migrateClocks() []*Item {
	var changed []*Item
	for _, it := range m.order {
		dt := m.turn - it.State.LastT
		it.State.LastT = m.itemNow(it) - dt
		changed = append(changed, it)
	}
	return changed
}
