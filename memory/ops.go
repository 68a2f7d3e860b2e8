package memory

import (
	"fmt"
	"slices"
	"strings"
)

// Add puts a new item into the workspace with S = initial_stability and
// last_T = now, and returns it.
func (m *Memory) Add(kind Kind, content string, origin Origin) (*Item, error) {
	content = strings.TrimSpace(content)
	if content == "" {
		return nil, fmt.Errorf("memory: nothing to remember")
	}
	switch kind {
	case KindNote, KindFile, KindInfo:
	default:
		return nil, fmt.Errorf("memory: unknown kind %q; use note, file or info", kind)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	it := &Item{
		ID: m.newID("w"), Kind: kind, Content: content, Origin: origin, InWorkspace: true, Created: m.now(),
		State: State{S: m.cfg.InitialStability, A: m.cfg.Gain, D: DUsed, LastT: m.clockOf(origin)},
	}
	if kind == KindInfo {
		it.Info = &Info{Source: []string{}, Current: content}
	}
	m.items[it.ID] = it
	if err := m.save([]*Item{it}, nil); err != nil {
		delete(m.items, it.ID)
		return nil, err
	}
	m.order = append(m.order, it) // ids grow, so the order holds
	cp := *it
	return &cp, nil
}

// Review records a use of items at the current turn with difficulty d
// (DUsed or DMaybe); an item that had left the workspace comes back with its
// history. Unknown ids are returned, not an error: the model may misremember.
func (m *Memory) Review(ids []string, d float64) (unknown []string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var changed []*Item
	seen := map[string]bool{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if seen[id] {
			continue
		}
		seen[id] = true
		it, ok := m.items[id]
		if !ok {
			unknown = append(unknown, id)
			continue
		}
		it.State = it.State.Review(m.curve, m.params, m.itemNow(it), d)
		if !it.InWorkspace {
			it.InWorkspace, it.Left = true, nil
		}
		changed = append(changed, it)
	}
	if len(changed) == 0 {
		return unknown, nil
	}
	return unknown, m.save(changed, nil)
}

// Let takes an item out of the workspace; it stays in the long-term store
// with its history (the model's "forget").
func (m *Memory) Let(id, reason string) error {
	return m.change(id, func(it *Item) {
		it.InWorkspace, it.Pinned = false, false
		it.Left = &Departure{Turn: m.itemNow(it), Reason: reason}
	})
}

// Pin exempts an item from passive GC, or ends the exemption.
func (m *Memory) Pin(id string, pinned bool) error {
	return m.change(id, func(it *Item) {
		it.Pinned = pinned
		if pinned && !it.InWorkspace {
			it.InWorkspace, it.Left = true, nil
		}
	})
}

// Strengthen multiplies an item's stability (context_operation "raise S").
func (m *Memory) Strengthen(id string, factor float64) error {
	if factor < 1 || factor > 100 {
		return fmt.Errorf("memory: a factor of %g is out of range 1–100", factor)
	}
	return m.change(id, func(it *Item) { it.State.S *= factor })
}

func (m *Memory) change(id string, f func(*Item)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[id]
	if !ok {
		return fmt.Errorf("%w %q", ErrNotFound, id)
	}
	before := *it
	f(it)
	if err := m.save([]*Item{it}, nil); err != nil {
		*it = before
		return err
	}
	return nil
}

// visible lists the items in the workspace that v may see, in id order.
// Callers hold m.mu.
func (m *Memory) visible(v Viewer) []*Item {
	var out []*Item
	for _, it := range m.order {
		if it.InWorkspace && v.sees(it.Origin) {
			out = append(out, it)
		}
	}
	return out
}

// HasWorkspace reports whether v's workspace section is not empty.
func (m *Memory) HasWorkspace(v Viewer) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, it := range m.items {
		if it.InWorkspace && v.sees(it.Origin) {
			return true
		}
	}
	return false
}

func sortItems(items []*Item) {
	slices.SortFunc(items, func(a, b *Item) int { return compareIDs(a.ID, b.ID) })
}

// ReviewFrom is a recall's review of what it hit (SPEC §3; issue: a hit on
// a workspace item counts as a review of it): the items channel may see
// that were made in the turn of one of messageIDs (Origin.MessageID) are
// reviewed with difficulty d, DMaybe for a recall. Like any review, it
// brings an item that had left the workspace back with its history —
// recalling the talk a note came from brings the note back to mind. It
// returns the ids reviewed.
func (m *Memory) ReviewFrom(channel string, messageIDs []string, d float64) ([]string, error) {
	if len(messageIDs) == 0 {
		return nil, nil
	}
	from := make(map[string]bool, len(messageIDs))
	for _, id := range messageIDs {
		from[id] = true
	}
	m.mu.Lock()
	var ids []string
	for _, it := range m.order {
		if it.Origin.MessageID != "" && from[it.Origin.MessageID] && it.Origin.Channel == channel {
			ids = append(ids, it.ID)
		}
	}
	m.mu.Unlock()
	if len(ids) == 0 {
		return nil, nil
	}
	if _, err := m.Review(ids, d); err != nil {
		return nil, err
	}
	return ids, nil
}

// Supersede records that item newID now holds what item oldID held: the old
// item leaves the workspace as what *was*, with now as the time it stopped
// holding, and each names the other. Nothing is deleted: both stay in the
// store, in `cyan memory ls --all` and in the export, and History lists the
// chain.
func (m *Memory) Supersede(oldID, newID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok1 := m.items[oldID]
	cur, ok2 := m.items[newID]
	if !ok1 || !ok2 || oldID == newID {
		return fmt.Errorf("%w: %q or %q", ErrNotFound, oldID, newID)
	}
	now := m.now()
	o, c := *old, *cur
	o.SupersededBy, o.Until, o.InWorkspace, o.Pinned = newID, &now, false, false
	o.Left = &Departure{Turn: m.itemNow(old), Reason: "superseded by " + newID}
	c.Supersedes = oldID
	if err := m.save([]*Item{&o, &c}, nil); err != nil {
		return err
	}
	*old, *cur = o, c
	return nil
}

// History is an item and the items it replaced, newest first: the chain
// of values a changed fact held.
func (m *Memory) History(id string) ([]ItemView, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[id]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrNotFound, id)
	}
	var out []ItemView
	seen := map[string]bool{}
	for ok && !seen[it.ID] {
		seen[it.ID] = true
		out = append(out, m.view(it))
		it, ok = m.items[it.Supersedes]
	}
	return out, nil
}
