package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/packets"
)

// Owners tells the owner's messages from everyone else's.
//
// A display name can be copied by anyone in a group chat, so names are
// weak: an entry "id:<platform id>" matches a speaker with that platform id
// in any conversation; a bare name matches only a private message that
// carries no platform id at all — the local front-ends (the command line,
// the desktop companion, the owner's own API calls), never a chat bridge
// that knows the speaker's id and never a group. The entry "local"
// (LocalOwner, listed by default) is the local user: every private message
// without a platform id — whatever name it gives — since only those who
// pass the API's checks (loopback, the token, the origin) can send one.
// With no entries at all, the same holds.
type Owners struct {
	ids   map[string]bool
	names map[string]bool
	local bool
}

// LocalOwner is the owner entry that means the local user: private
// messages without a chat-app id (the terminal, the page, your own API
// calls).
const LocalOwner = "local"

// ParseOwners reads permissions.owners. An entry that could never mean the
// owner (config.CheckOwner: empty, no user id, a placeholder of the docs,
// the README's old sample ids) is an error that says what to write.
func ParseOwners(list []string) (Owners, error) {
	o := Owners{ids: map[string]bool{}, names: map[string]bool{}}
	for i, e := range list {
		if err := config.CheckOwner(e); err != nil {
			return o, fmt.Errorf("owners[%d]: %w", i, err)
		}
		e = strings.TrimSpace(e)
		if id, ok := strings.CutPrefix(e, "id:"); ok {
			o.ids[id] = true
			continue
		}
		if e == LocalOwner {
			o.local = true
			continue
		}
		o.names[e] = true
	}
	return o, nil
}

// Match reports whether c is the owner.
func (o Owners) Match(c packets.Caller) bool {
	if c.Owner {
		return true
	}
	if c.SpeakerID != "" {
		return o.ids[c.SpeakerID]
	}
	if !packets.Private(c.Kind) { // a name is weak anywhere but a private conversation
		return false
	}
	if o.local || (len(o.ids) == 0 && len(o.names) == 0) {
		return true
	}
	return o.names[c.Speaker]
}

// DefaultOwner is the owner's permission object when the config sets none:
// every tool, but the owner confirms what writes, runs programs or edits
// the agent itself; custom tools may be written; every piece of knowledge
// may be seen and changed (packets.Scope).
func DefaultOwner() *packets.Permission {
	return mustPermission(`{
		"tools": ["*",
			{"name": "@write", "action": "confirm"},
			{"name": "@execute", "action": "confirm"},
			{"name": "@self_edit", "action": "confirm"}],
		"infos": ["**"],
		"self_edit": ["tools/extra/custom/*", "persona/scripts/*", "persona/observers/*",
			"memory:**", "events:**", "objects:**", "theories:**"],
		"defaultAction": "deny"}`)
}

// DefaultGuest is the permission object of everyone else when the config
// sets none: no tool that reads the owner's files, writes, runs programs,
// reaches the network, operates the computer or edits the agent; it sees
// only what was said in its own conversation and the persona's public
// knowledge, and changes only its conversation's memory and topics — never
// shared knowledge such as theories and objects.
func DefaultGuest() *packets.Permission {
	return mustPermission(`{
		"tools": ["*", "!@read", "!@write", "!@execute", "!@network", "!@operate", "!@self_edit"],
		"infos": ["*:own", "*:public"],
		"self_edit": ["memory:own", "events:own"],
		"defaultAction": "deny"}`)
}

// withDefaults fills the lists a configured permission object leaves out
// (nil, not an empty list) from the default of its role, so an owner's
// config that only changes tool rules keeps seeing and keeping its
// knowledge: infos whole, and self_edit's knowledge names ("memory:**")
// — never the parts of the agent itself (custom tools, scripts), which a
// config grants by naming them.
func withDefaults(p, def *packets.Permission) *packets.Permission {
	if p.Infos != nil && p.SelfEdit != nil {
		return p
	}
	cp := *p
	if cp.Infos == nil {
		cp.Infos = def.Infos
	}
	if cp.SelfEdit == nil {
		cp.SelfEdit = []string{}
		for _, e := range def.SelfEdit {
			if strings.Contains(e, ":") {
				cp.SelfEdit = append(cp.SelfEdit, e)
			}
		}
	}
	return &cp
}

func mustPermission(s string) *packets.Permission {
	p := new(packets.Permission)
	if err := json.Unmarshal([]byte(s), p); err != nil {
		panic(err)
	}
	return p
}
