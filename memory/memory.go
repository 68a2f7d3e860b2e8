package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/store"
)

// Natural runs the LLM-backed steps as prompt scripts: Call runs the
// script called name with the step's structured inputs and decodes its
// validated value into out. channel names the conversation, for the
// traces. The daemon passes the script library (script.Library.Call).
type Natural interface {
	Call(ctx context.Context, name, channel string, in map[string]any, out any) error
}

// The prompt scripts of memory's steps (built in; a persona's scripts/
// folder may override each).
const (
	// ScriptRemember decides the kind of a remembered item, or to
	// strengthen one already held.
	ScriptRemember = "remember"
	// ScriptCompress shortens one workspace item for active GC.
	ScriptCompress = "compress_item"
	// ScriptContextOperation turns a request in plain words into
	// context_operation's operations.
	ScriptContextOperation = "context_operation"
)

// Options configure Open.
type Options struct {
	Store  *store.Store
	Config config.Memory
	// Natural runs the LLM-backed steps; nil leaves them to plain rules
	// (remember adds a note, active GC evicts instead of compressing).
	Natural Natural
	// AgentName is the agent's name, for the scripts (nil: they use their
	// default).
	AgentName func() string
	Now       func() time.Time // nil: time.Now
	Logger    *slog.Logger     // nil: discard
	// Count counts tokens (nil: a rough estimate); the daemon passes the
	// prompt assembler's counter.
	Count func(string) int
}

// agentName is the agent's name for a script's agent_name input; nil
// (the input's default) when none is known.
func (m *Memory) agentName() any {
	if m.agent == nil {
		return nil
	}
	if n := strings.TrimSpace(m.agent()); n != "" {
		return n
	}
	return nil
}

// ErrNotFound means no item (or plan) has the id.
var ErrNotFound = errors.New("memory: no such item")

// Memory is the workspace and its long-term store. It is safe for
// concurrent use; every change is durable before the call returns.
type Memory struct {
	db      *badger.DB
	st      *store.Store
	curve   Curve
	params  Params
	cfg     config.Memory
	natural Natural
	agent   func() string
	now     func() time.Time
	log     *slog.Logger
	count   func(string) int
	journal *journal.Journal

	mu     sync.Mutex
	turn   int64  // every answered turn (the API's T)
	clk    clocks // the scopes' clocks, which items decay by
	seq    int64
	items  map[string]*Item
	order  []*Item // every item, in id order
	plans  map[string]*Plan
	pulled map[string][]Pulled // per channel
	chTurn map[string]int64    // answered turns per channel (not persistent, like the pulled area)
	usage  []Usage             // newest last, bounded
	gc     []GCEvent           // newest last, bounded
	lines  map[string]lineCache
}

// Open loads the workspace from the store.
func Open(o Options) (*Memory, error) {
	if o.Store == nil {
		return nil, errors.New("memory: no store")
	}
	curve, err := CurveByName(o.Config.Curve)
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Count == nil {
		o.Count = func(s string) int { return (len(s) + 3) / 4 }
	}
	m := &Memory{
		db: o.Store.DB(), st: o.Store, curve: curve, cfg: o.Config, natural: o.Natural, agent: o.AgentName, now: o.Now, log: o.Logger, count: o.Count, journal: o.Store.Journal(),
		params: Params{Gain: o.Config.Gain, MaxJumpMini: int64(o.Config.MaxJumpMini), MaxJumpLarge: int64(o.Config.MaxJumpLarge)},
		items:  map[string]*Item{}, plans: map[string]*Plan{}, pulled: map[string][]Pulled{}, chTurn: map[string]int64{},
	}
	migrate, err := m.load()
	if err != nil {
		return nil, err
	}
	if migrate && len(m.order) > 0 {
		m.mu.Lock()
		err := m.save(m.migrateClocks(), nil)
		m.mu.Unlock()
		if err != nil {
			return nil, err
		}
		m.log.Info("workspace items moved onto their scopes' clocks", "items", len(m.order))
	}
	return m, nil
}

var (
	keyTurn    = []byte(store.PrefixMemory + "T")
	keySeq     = []byte(store.PrefixMemory + "seq")
	prefixItem = store.PrefixMemory + "i\x00"
	prefixPlan = store.PrefixMemory + "p\x00"
)

func (m *Memory) load() (migrate bool, err error) {
	return migrate, m.db.View(func(txn *badger.Txn) error {
		var err error
		if migrate, err = m.loadClocks(txn); err != nil {
			return err
		}
		for _, k := range []struct {
			key []byte
			dst *int64
		}{{keyTurn, &m.turn}, {keySeq, &m.seq}} {
			it, err := txn.Get(k.key)
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if err := it.Value(func(v []byte) error {
				n, err := strconv.ParseInt(string(v), 10, 64)
				*k.dst = n
				return err
			}); err != nil {
				return fmt.Errorf("memory: load counter: %w", err)
			}
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixMemory), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := string(it.Item().Key())
			switch {
			case len(k) > len(prefixItem) && k[:len(prefixItem)] == prefixItem:
				item := new(Item)
				if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, item) }); err != nil {
					return fmt.Errorf("memory: load %s: %w", k, err)
				}
				m.items[item.ID] = item
				m.order = append(m.order, item)
			case len(k) > len(prefixPlan) && k[:len(prefixPlan)] == prefixPlan:
				p := new(Plan)
				if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, p) }); err != nil {
					return fmt.Errorf("memory: load %s: %w", k, err)
				}
				m.plans[p.ID] = p
			}
		}
		sortItems(m.order)
		return nil
	})
}

// save writes items, plans and the counters in one durable transaction.
// Callers hold m.mu.
func (m *Memory) save(items []*Item, plans []*Plan, deleted ...string) error {
	err := m.db.Update(func(txn *badger.Txn) error {
		for _, it := range items {
			b, err := json.Marshal(it)
			if err != nil {
				return err
			}
			if err := txn.Set([]byte(prefixItem+it.ID), b); err != nil {
				return err
			}
		}
		for _, p := range plans {
			b, err := json.Marshal(p)
			if err != nil {
				return err
			}
			if err := txn.Set([]byte(prefixPlan+p.ID), b); err != nil {
				return err
			}
		}
		for _, k := range deleted {
			if err := txn.Delete([]byte(k)); err != nil {
				return err
			}
		}
		if err := txn.Set(keyTurn, []byte(strconv.FormatInt(m.turn, 10))); err != nil {
			return err
		}
		clk, err := json.Marshal(m.clk)
		if err != nil {
			return err
		}
		if err := txn.Set(keyClocks, clk); err != nil {
			return err
		}
		return txn.Set(keySeq, []byte(strconv.FormatInt(m.seq, 10)))
	})
	if err != nil {
		return fmt.Errorf("memory: save: %w", err)
	}
	return nil
}

// changed tells the journal that plans changed (main-observer schedules
// deferred plans from journal.MemoryChanged).
func (m *Memory) changed() {
	m.journal.Post(journal.New(journal.MemoryChanged, "", nil))
}

// Turn is the agent's turn counter over every conversation: one turn per
// answered message. Items decay by their own scope's clock instead
// (ItemView.T; see clocks).
func (m *Memory) Turn() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.turn
}

// ItemView is an item with its own clock T now and R computed at T.
type ItemView struct {
	*Item
	R float64 `json:"R"`
	T int64   `json:"T"`
}

// view is an item as the API sees it. Callers hold m.mu.
func (m *Memory) view(it *Item) ItemView {
	cp := *it
	t := m.itemNow(it)
	return ItemView{Item: &cp, R: cp.State.Retrievability(m.curve, t), T: t}
}

// Items lists items in id order: those in the workspace, or all of them.
func (m *Memory) Items(all bool) []ItemView {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ItemView
	for _, it := range m.items {
		if all || it.InWorkspace {
			out = append(out, m.view(it))
		}
	}
	slices.SortFunc(out, func(a, b ItemView) int { return compareIDs(a.ID, b.ID) })
	return out
}

// Get returns one item with its R now.
func (m *Memory) Get(id string) (ItemView, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[id]
	if !ok {
		return ItemView{}, fmt.Errorf("%w %q", ErrNotFound, id)
	}
	return m.view(it), nil
}

// CurveOf returns R of an item over the next n turns of its clock, from
// now.
func (m *Memory) CurveOf(id string, n int) ([]float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[id]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrNotFound, id)
	}
	out := make([]float64, n+1)
	t := m.itemNow(it)
	for i := range out {
		out[i] = it.State.Retrievability(m.curve, t+int64(i))
	}
	return out, nil
}

// Delete removes an item for good: the user's "forget this".
func (m *Memory) Delete(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.items[id]; !ok {
		return fmt.Errorf("%w %q", ErrNotFound, id)
	}
	delete(m.items, id)
	delete(m.lines, id)
	m.order = slices.DeleteFunc(m.order, func(it *Item) bool { return it.ID == id })
	return m.save(nil, nil, prefixItem+id)
}

// newID returns the next id with the given letter ("w" items, "p" plans).
// Callers hold m.mu.
func (m *Memory) newID(letter string) string {
	m.seq++
	return letter + strconv.FormatInt(m.seq, 10)
}

// compareIDs orders ids by their number ("w2" before "w10").
func compareIDs(a, b string) int {
	na, _ := strconv.Atoi(a[1:])
	nb, _ := strconv.Atoi(b[1:])
	if na != nb {
		return na - nb
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
