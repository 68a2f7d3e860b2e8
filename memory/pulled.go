package memory

import (
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/notation"
)

// Pulled is an entry of the pulled-info area: something a tool fetched
// (a file read, recall results), shown as "%[ref] - summary".
type Pulled struct {
	Ref     string `json:"ref"`
	Summary string `json:"summary"`
	Turn    int64  `json:"turn"`
}

// Pull adds an entry to channel's pulled-info area. The area is not
// persistent: an entry is shown in the packets that follow the pull until
// the next user message has been answered, then it is forgotten unless the
// model put it into the workspace (remember). A ref pulled again replaces
// its entry.
func (m *Memory) Pull(channel, ref, summary string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.pulled[channel]
	for i, p := range list {
		if p.Ref == ref {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	m.pulled[channel] = append(list, Pulled{Ref: ref, Summary: summary, Turn: m.turn})
}

// forgetPulled drops entries pulled before turn t. Callers hold m.mu.
func (m *Memory) forgetPulled(t int64) {
	for ch, list := range m.pulled {
		kept := list[:0]
		for _, p := range list {
			if p.Turn >= t {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 {
			delete(m.pulled, ch)
		} else {
			m.pulled[ch] = kept
		}
	}
}

// PulledSection renders channel's pulled-info area.
func (m *Memory) PulledSection(channel string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	for _, p := range m.pulled[channel] {
		fmt.Fprintf(&b, "%%[%s] - %s\n", notation.Escape(oneLine(p.Ref)), notation.Escape(oneLine(p.Summary)))
	}
	return strings.TrimRight(b.String(), "\n")
}
