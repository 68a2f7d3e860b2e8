package bridge

import (
	"strings"
	"sync"

	"github.com/cyan-agent/cyan/notation"
)

// roster remembers, per chat, who spoke lately: the names the model may
// mention and the last message of each, for "@last_<name>" replies. It is
// bounded: a chat keeps its most recent maxSpeakers speakers.
type roster struct {
	mu    sync.Mutex
	chats map[Chat]*chatRoster
}

const maxSpeakers = 512

type chatRoster struct {
	byName map[string]string // folded name → user id
	users  map[string]*speaker
	tick   uint64
}

type speaker struct {
	name    string
	lastMsg string
	seen    uint64
}

func fold(name string) string { return strings.ToLower(notation.CleanName(name)) }

// saw records that user said message id in chat.
func (r *roster) saw(c Chat, u User, msgID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.chats == nil {
		r.chats = map[Chat]*chatRoster{}
	}
	cr := r.chats[c]
	if cr == nil {
		cr = &chatRoster{byName: map[string]string{}, users: map[string]*speaker{}}
		r.chats[c] = cr
	}
	cr.tick++
	sp := cr.users[u.ID]
	if sp == nil {
		if len(cr.users) >= maxSpeakers {
			cr.evict()
		}
		sp = &speaker{}
		cr.users[u.ID] = sp
	}
	if sp.name != "" && sp.name != u.Name && cr.byName[fold(sp.name)] == u.ID {
		delete(cr.byName, fold(sp.name))
	}
	sp.name, sp.seen = u.Name, cr.tick
	if msgID != "" {
		sp.lastMsg = msgID
	}
	if u.Name != "" {
		cr.byName[fold(u.Name)] = u.ID
	}
	if u.Username != "" {
		cr.byName[strings.ToLower(u.Username)] = u.ID
	}
}

func (cr *chatRoster) evict() {
	var oldest string
	var at uint64
	for id, sp := range cr.users {
		if oldest == "" || sp.seen < at {
			oldest, at = id, sp.seen
		}
	}
	if sp := cr.users[oldest]; sp != nil && cr.byName[fold(sp.name)] == oldest {
		delete(cr.byName, fold(sp.name))
	}
	delete(cr.users, oldest)
}

// lookup finds a speaker of the chat by name: their id, shown name and
// last message id.
func (r *roster) lookup(c Chat, name string) (id, shown, last string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cr := r.chats[c]
	if cr == nil {
		return "", "", "", false
	}
	id, ok = cr.byName[fold(name)]
	if !ok {
		id, ok = cr.byName[strings.ToLower(strings.TrimSpace(name))]
	}
	if !ok {
		return "", "", "", false
	}
	sp := cr.users[id]
	return id, sp.name, sp.lastMsg, true
}

// nameOf is a speaker's last known name in the chat.
func (r *roster) nameOf(c Chat, id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cr := r.chats[c]; cr != nil {
		if sp := cr.users[id]; sp != nil {
			return sp.name
		}
	}
	return ""
}

// count is the number of chats seen.
func (r *roster) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.chats)
}
