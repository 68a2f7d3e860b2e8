package memory

import (
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/packets"
)

// Pulled is an entry of the pulled-info area: something a tool fetched
// (a file read, a recalled passage), shown as "%[ref] - summary", or
// "%[ref] location - summary" for a range of a log ("%[history/home/
// 2025-02-10] message 3 ~ message 5 - …").
type Pulled struct {
	Ref      string `json:"ref"`
	Location string `json:"location,omitempty"`
	Summary  string `json:"summary"`
	// Turn is the channel's turn the entry was pulled in.
	Turn int64 `json:"turn"`
}

// MaxPulled bounds the entries of one channel's area; a pull beyond it
// drops the oldest.
const MaxPulled = 64

// Pull adds an entry to channel's pulled-info area; see PullRange.
func (m *Memory) Pull(channel, ref, summary string) { m.PullRange(channel, ref, "", summary) }

// PullRange adds an entry for a place in ref (location: "message 3 ~
// message 5", "line 2", "" for the whole) to channel's pulled-info area.
//
// The area is not persistent, and it is per channel: an entry is shown in
// the channel's packets that follow the pull until the channel's next user
// message has been answered, then it is forgotten unless the model put it
// into the workspace (remember). Turns of other channels do not count, so
// a busy group does not wipe what a private chat just pulled. The same
// ref and location pulled again replace their entry; past MaxPulled
// entries the oldest go.
func (m *Memory) PullRange(channel, ref, location, summary string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.pulled[channel]
	for i, p := range list {
		if p.Ref == ref && p.Location == location {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	list = append(list, Pulled{Ref: ref, Location: location, Summary: summary, Turn: m.chTurn[channel]})
	if over := len(list) - MaxPulled; over > 0 {
		list = append(list[:0], list[over:]...)
	}
	m.pulled[channel] = list
}

// turnEnded counts an answered turn of channel and forgets the entries
// pulled before the turn that just ended. Callers hold m.mu.
func (m *Memory) turnEnded(channel string) {
	m.chTurn[channel]++
	t := m.chTurn[channel] - 1
	kept := m.pulled[channel][:0]
	for _, p := range m.pulled[channel] {
		if p.Turn >= t {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		delete(m.pulled, channel)
	} else {
		m.pulled[channel] = kept
	}
}

// Line is the entry's line in the section, its untrusted text escaped
// and kept on one line.
func (p Pulled) Line() string {
	ref := "%[" + notation.Escape(oneLine(p.Ref)) + "]"
	if p.Location != "" {
		ref += " " + notation.Escape(oneLine(p.Location))
	}
	return ref + " - " + notation.Escape(oneLine(p.Summary))
}

// PulledArea returns channel's pulled-info entries, oldest first.
func (m *Memory) PulledArea(channel string) []Pulled {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Pulled(nil), m.pulled[channel]...)
}

// PulledSection renders channel's pulled-info area within budget tokens:
// when it does not fit, the newest entries are shown and the older ones
// traced as left out. The lines keep their pull order.
func (m *Memory) PulledSection(channel string, budget int) (string, []packets.SectionItem) {
	list := m.PulledArea(channel)
	lines := make([]string, len(list))
	items := make([]packets.SectionItem, len(list))
	used := 0
	for i := len(list) - 1; i >= 0; i-- {
		line := list[i].Line()
		n := m.count(line) + 1
		id := list[i].Ref
		if list[i].Location != "" {
			id += " " + list[i].Location
		}
		items[i] = packets.SectionItem{ID: id, Tokens: n}
		if used+n > budget {
			items[i].Reason = fmt.Sprintf("over budget (%d tokens); older than what fits", budget)
			continue
		}
		used += n
		items[i].Included = true
		lines[i] = line
	}
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(l + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n"), items
}

// PullRead notes in channel's pulled-info area what a read brought in
// (SPEC §2: "%[x] - summary"): ref is what was read as the model named it
// ("%[path] Line 3 ~ Line 9", a bare path, "%[history/…] message 4 ~
// message 9"), text what came back. The summary tells only its length,
// never its words: the contents stay in the tool-call area until the next
// user message and are then forgotten (a secret read from a file must not
// linger here); the entry lives as pulled entries do.
func (m *Memory) PullRead(channel, ref, text string) {
	ref = strings.TrimSpace(ref)
	if ref == "" || strings.TrimSpace(text) == "" {
		return
	}
	location := ""
	if body, ok := strings.CutPrefix(ref, "%["); ok {
		if end := strings.LastIndex(body, "]"); end > 0 {
			ref, location = body[:end], strings.TrimSpace(body[end+1:])
		}
	}
	lines := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	m.PullRange(channel, ref, location, fmt.Sprintf("read, %d lines (open it again for its words, or keep it with context_operation)", lines))
}
