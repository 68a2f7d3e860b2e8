package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// GCEvent records what GC did to an item, and why.
type GCEvent struct {
	Turn   int64   `json:"turn"`
	Item   string  `json:"item"`
	Action string  `json:"action"` // "evicted" or "compressed"
	Reason string  `json:"reason"`
	R      float64 `json:"R"`
}

const gcLogSize = 256

// PassiveGC takes every unpinned item whose R fell below evict_below out of
// the workspace (SPEC §3). The items stay in the long-term store with their
// state, so bringing one back restores its history.
func (m *Memory) PassiveGC() ([]GCEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var changed []*Item
	var events []GCEvent
	for _, it := range m.order {
		if !it.InWorkspace || it.Pinned {
			continue
		}
		t := m.itemNow(it)
		r := it.State.Retrievability(m.curve, t)
		if r >= m.cfg.EvictBelow {
			continue
		}
		reason := fmt.Sprintf("passive GC: R %.3f fell below %.3f", r, m.cfg.EvictBelow)
		it.InWorkspace = false
		it.Left = &Departure{Turn: t, Reason: reason}
		changed = append(changed, it)
		events = append(events, GCEvent{Turn: t, Item: it.ID, Action: "evicted", Reason: reason, R: r})
	}
	if len(changed) == 0 {
		return nil, nil
	}
	m.logGC(events)
	return events, m.save(changed, nil)
}

// ActiveGC keeps the workspace that v sees within its token budget:
// it takes the items in order of lowest R (pinned ones last) and compresses
// each (through the compress step) or, when it cannot be compressed further
// or compression fails, evicts it, until the rendered workspace fits.
// Compressed items follow the seed's suggestion for active GC: their gain
// becomes 0.3 and their D at least 1, so they grow slowly from then on.
func (m *Memory) ActiveGC(ctx context.Context, v Viewer) ([]GCEvent, error) {
	m.mu.Lock()
	items := m.visible(v)
	total := m.renderedTokens(items)
	budget := m.cfg.Budget
	if total <= budget {
		m.mu.Unlock()
		return nil, nil
	}
	order := slices.Clone(items)
	slices.SortStableFunc(order, func(a, b *Item) int {
		if a.Pinned != b.Pinned {
			if a.Pinned {
				return 1
			}
			return -1
		}
		ra, rb := a.State.Retrievability(m.curve, m.itemNow(a)), b.State.Retrievability(m.curve, m.itemNow(b))
		switch {
		case ra < rb:
			return -1
		case ra > rb:
			return 1
		}
		return 0
	})
	m.mu.Unlock()

	var events []GCEvent
	for _, it := range order {
		if total <= budget {
			break
		}
		if ctx.Err() != nil { // stopping: never evict because a call was cut short
			return events, nil
		}
		m.mu.Lock()
		snap := *it
		r := snap.State.Retrievability(m.curve, m.itemNow(it))
		m.mu.Unlock()
		before := m.count(snap.render())
		short, err := m.compress(ctx, &snap)
		if ctx.Err() != nil {
			return events, nil
		}
		m.mu.Lock()
		cur, ok := m.items[it.ID]
		if !ok || !cur.InWorkspace {
			m.mu.Unlock()
			continue
		}
		ev := GCEvent{Turn: m.itemNow(cur), Item: it.ID, R: r}
		if err == nil && short != "" && m.count(short) < m.count(cur.Content) {
			if cur.Original == "" {
				cur.Original = cur.Content
			}
			cur.Content = short
			cur.State.A = 0.3
			cur.State.D = max(cur.State.D, 1)
			ev.Action = "compressed"
			ev.Reason = fmt.Sprintf("active GC: workspace %d tokens over budget %d; lowest R", total, budget)
		} else {
			cur.InWorkspace = false
			ev.Action = "evicted"
			ev.Reason = fmt.Sprintf("active GC: workspace %d tokens over budget %d; lowest R", total, budget)
			if err != nil {
				ev.Reason += "; compression failed: " + err.Error()
			} else {
				ev.Reason += "; nothing left to compress"
			}
			cur.Left = &Departure{Turn: ev.Turn, Reason: ev.Reason}
		}
		after := 0
		if cur.InWorkspace {
			after = m.count(cur.render())
		}
		total += after - before
		events = append(events, ev)
		m.logGC([]GCEvent{ev})
		err = m.save([]*Item{cur}, nil)
		m.mu.Unlock()
		if err != nil {
			return events, err
		}
	}
	return events, nil
}

// compress asks the compress_item script for a shorter form of an item,
// of at most half its characters, that keeps every number of it; an item
// already compressed, a file reference, or a memory without scripts
// cannot be compressed. The full text stays in the item (Original). The item's
// origin channel names the call in the traces.
func (m *Memory) compress(ctx context.Context, it *Item) (string, error) {
	if m.natural == nil || it.Original != "" || it.Kind == KindFile {
		return "", nil
	}
	var out struct {
		Summary string `json:"summary"`
	}
	in := map[string]any{"text": it.Content, "kind": string(it.Kind), "agent_name": m.agentName(),
		"max_chars": max(utf8.RuneCountInString(it.Content)/2, 16)}
	if err := m.natural.Call(ctx, ScriptCompress, it.Origin.Channel, in, &out); err != nil {
		return "", err
	}
	short := strings.TrimSpace(out.Summary)
	if lost := lostNumbers(short, it.Content); len(lost) > 0 {
		return "", fmt.Errorf("the shorter form left out %s", strings.Join(lost, ", "))
	}
	return short, nil
}

// lostNumbers lists the numbers of text (its tokens that hold a digit)
// that short leaves out. A compression that loses one is refused: the
// item is evicted whole instead, and comes back whole when remembered or
// recalled.
func lostNumbers(short, text string) []string {
	have := map[string]bool{}
	for _, t := range factTokens(short) {
		have[t] = true
	}
	var out []string
	for _, t := range factTokens(text) {
		if !have[t] && strings.ContainsFunc(t, unicode.IsDigit) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// renderedTokens is the token count of the workspace section of items.
// Callers hold m.mu.
func (m *Memory) renderedTokens(items []*Item) int {
	n := 0
	for _, it := range items {
		n += m.count(it.render()) + 1
	}
	return n
}

// logGC keeps the newest GC events. Callers hold m.mu.
func (m *Memory) logGC(evs []GCEvent) {
	m.gc = append(m.gc, evs...)
	if over := len(m.gc) - gcLogSize; over > 0 {
		m.gc = slices.Delete(m.gc, 0, over)
	}
}

// GCLog returns the newest GC events, oldest first.
func (m *Memory) GCLog() []GCEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.gc)
}
