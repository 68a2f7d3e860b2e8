package memory

import (
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/packets"
)

// lineCache remembers an item's rendered line and its token count, so a
// turn renders only items that changed.
type lineCache struct {
	content, summary string
	compressed       bool
	was, info        string
	line             string
	tokens           int
}

// was is what an item that replaced another shows of it: " (was …, until
// …)", the old value and the day it stopped holding. Callers hold m.mu.
func (m *Memory) was(it *Item) string {
	old, ok := m.items[it.Supersedes]
	if it.Supersedes == "" || !ok {
		return ""
	}
	until := ""
	if old.Until != nil {
		until = ", until " + old.Until.Format("2006-01-02 15:04")
	}
	return " (was " + notation.Escape(oneLine(old.Content)) + until + ")"
}

// line returns an item's rendered line and its tokens. Callers hold m.mu.
func (m *Memory) line(it *Item) (string, int) {
	if m.lines == nil {
		m.lines = map[string]lineCache{}
	}
	c, ok := m.lines[it.ID]
	was, info := m.was(it), ""
	if it.Info != nil {
		info = strings.Join(it.Info.Source, "\x00") + "\x00" + it.Info.ExtraData
	}
	if ok && c.content == it.Content && c.summary == it.Summary && c.compressed == (it.Original != "") && c.was == was && c.info == info {
		return c.line, c.tokens
	}
	line := it.render() + was
	c = lineCache{content: it.Content, summary: it.Summary, compressed: it.Original != "", was: was, info: info, line: line, tokens: m.count(line) + 1}
	m.lines[it.ID] = c
	return c.line, c.tokens
}

// WorkspaceSection renders the workspace v may see, each item with
// its id, in id order, within budget tokens. When the items do not fit
// (active GC has not caught up yet) the strongest are shown — pinned first,
// then by R — until the next one would not fit, and the rest are traced as
// left out.
func (m *Memory) WorkspaceSection(v Viewer, budget int) (string, []packets.SectionItem) {
	m.mu.Lock()
	defer m.mu.Unlock()
	items := m.visible(v)
	if len(items) == 0 {
		return "", nil
	}
	type cand struct {
		it     *Item
		line   string
		tokens int
		r      float64
	}
	cands := make([]cand, len(items))
	total := 0
	for i, it := range items {
		line, n := m.line(it)
		cands[i] = cand{it: it, line: line, tokens: n}
		total += n
	}
	include := make([]bool, len(items))
	reason := ""
	if total <= budget {
		for i := range include {
			include[i] = true
		}
	} else {
		reason = fmt.Sprintf("over budget (%d of %d tokens); waiting for active GC", total, budget)
		for i := range cands {
			cands[i].r = cands[i].it.State.Retrievability(m.curve, m.itemNow(cands[i].it))
		}
		// Pinned first, then by R, ties in id order: a heap yields the
		// strongest items one by one, so only those that fit are ordered.
		stronger := func(x, y int32) bool {
			a, b := &cands[x], &cands[y]
			switch {
			case a.it.Pinned != b.it.Pinned:
				return a.it.Pinned
			case a.r != b.r:
				return a.r > b.r
			}
			return x < y
		}
		h := make([]int32, len(cands))
		for i := range h {
			h[i] = int32(i)
		}
		for i := len(h)/2 - 1; i >= 0; i-- {
			siftDown(h, i, stronger)
		}
		used := 0
		for len(h) > 0 {
			top := h[0]
			c := &cands[top]
			if used+c.tokens > budget {
				break // the strongest left does not fit: stop here
			}
			used += c.tokens
			include[top] = true
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
			siftDown(h, 0, stronger)
		}
	}
	var b strings.Builder
	trace := make([]packets.SectionItem, 0, len(cands))
	for i, c := range cands {
		in := include[i]
		si := packets.SectionItem{ID: c.it.ID, Tokens: c.tokens, Included: in}
		if !in {
			si.Reason = reason
		} else {
			b.WriteString(c.line)
			b.WriteByte('\n')
		}
		trace = append(trace, si)
	}
	return strings.TrimRight(b.String(), "\n"), trace
}

// siftDown restores the heap property of h below i, the "first" element
// being the one first(x, y) prefers.
func siftDown(h []int32, i int, first func(x, y int32) bool) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		best := l
		if r := l + 1; r < len(h) && first(h[r], h[l]) {
			best = r
		}
		if !first(h[best], h[i]) {
			return
		}
		h[i], h[best] = h[best], h[i]
		i = best
	}
}
