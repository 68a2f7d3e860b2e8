package recall

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// PulledItem is one entry of the pulled-info area (SPEC §2 item 6).
type PulledItem struct {
	// Ref is the %[…] reference (the passage's source) and Location the
	// place in it.
	Ref      string
	Location string
	// Summary says what it holds.
	Summary string
	At      time.Time
	viewed  bool
}

// Line renders the item as the seed's "%[ref] - summary". Ref and Summary
// are untrusted (they quote stored text); the caller escapes the line.
func (p PulledItem) Line() string {
	if p.Location != "" {
		return fmt.Sprintf("%%[%s] %s - %s", p.Ref, p.Location, p.Summary)
	}
	return fmt.Sprintf("%%[%s] - %s", p.Ref, p.Summary)
}

// Pulled is the pulled-info area of each channel: not persistent (a
// restart forgets it), and each item is shown once. The area is read when
// a turn's prompt is assembled, so what a recall pulled during one turn is
// shown in the next turn's prompt and is gone from the one after, unless
// the model moves it into the workspace (which the workspace issue will
// own) — the seed's "forgotten at the next user message" and "compressed
// after one viewing".
type Pulled struct {
	mu    sync.Mutex
	items map[string][]PulledItem
	// Max bounds the items kept per channel (oldest dropped first).
	Max int
}

// NewPulled returns an empty area.
func NewPulled() *Pulled { return &Pulled{items: map[string][]PulledItem{}, Max: 16} }

// Add puts items into a channel's area.
func (p *Pulled) Add(channel string, items ...PulledItem) {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := append(p.items[channel], items...)
	if len(list) > p.Max {
		list = list[len(list)-p.Max:]
	}
	p.items[channel] = list
}

// View returns the items to show in this turn's prompt, newest last, and
// forgets those that were shown in an earlier turn.
func (p *Pulled) View(channel string) []PulledItem {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []PulledItem
	for _, it := range p.items[channel] {
		if !it.viewed {
			out = append(out, it)
		}
	}
	kept := make([]PulledItem, len(out))
	for i, it := range out {
		it.viewed = true
		kept[i] = it
	}
	if len(kept) == 0 {
		delete(p.items, channel)
	} else {
		p.items[channel] = kept
	}
	return out
}

// Pulled returns the index's pulled-info area, which its tool fills.
func (x *Index) Pulled() *Pulled { return x.pulled }

// pulledItems turns a tool answer into pulled-info entries.
func pulledItems(r *Response, now time.Time) []PulledItem {
	var out []PulledItem
	for _, res := range r.Results {
		first := res.Text
		if i := strings.IndexByte(first, '\n'); i >= 0 {
			first = first[:i]
		}
		out = append(out, PulledItem{
			Ref:      res.Source,
			Location: res.Location,
			Summary:  truncate(first, 160),
			At:       now,
		})
	}
	return out
}
