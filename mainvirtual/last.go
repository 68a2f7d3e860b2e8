package mainvirtual

import (
	"strings"

	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/store"
)

// lastRefs resolves the model's @last references (notation.ExpandLast)
// against a channel's recent messages: what each speaker said, under the
// name the prompt shows them by, and the agent's own answers under its
// name. It reads the store once, on the first reference of a turn.
type lastRefs struct {
	store   *store.Store
	channel string
	agent   string

	loaded bool
	names  []string
	said   map[string][]notation.Quote // name → messages, oldest first
}

// lastScan bounds how far back a reference looks.
const lastScan = 400

func (l *lastRefs) load() {
	if l.loaded {
		return
	}
	l.loaded = true
	l.said = map[string][]notation.Quote{}
	recent, err := l.store.Recent(l.channel, store.Window{Limit: lastScan, Keep: func(m *store.Message) bool {
		return m.Text != "" && (m.Role == store.RoleUser || m.Role == store.RoleAssistant) && !m.IsRecalled()
	}})
	if err != nil {
		return // references stay as bare names
	}
	for _, m := range recent {
		name := l.agent
		if m.Role == store.RoleUser {
			name = notation.SpeakerName(m.User, l.agent)
		}
		if _, ok := l.said[name]; !ok {
			l.names = append(l.names, name)
		}
		l.said[name] = append(l.said[name], notation.Quote{ID: m.ID, Name: name, Text: m.Text})
	}
	if _, ok := l.said[l.agent]; !ok && l.agent != "" {
		l.names = append(l.names, l.agent)
	}
}

// expand rewrites the references in text; it returns the ids quoted.
func (l *lastRefs) expand(text string) (string, []string) {
	if l == nil {
		return text, nil
	}
	return notation.ExpandLast(text, l.loadedNames(text), func(name string, n int) []notation.Quote {
		q := l.said[name]
		if n < len(q) {
			q = q[len(q)-n:]
		}
		return q
	})
}

func (l *lastRefs) loadedNames(text string) []string {
	if !containsLast(text) {
		return nil
	}
	l.load()
	return l.names
}

func containsLast(s string) bool { return strings.Contains(s, notation.LastPrefix) }
