package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/packets"
)

// Owners tells the owner's messages from everyone else's.
//
// A display name can be copied by anyone in a group chat, so names are
// weak: an entry "id:<platform id>" matches a speaker with that platform id
// in any conversation; a bare name matches only a private message that
// carries no platform id at all — the local front-ends (the command line,
// the desktop companion, the owner's own API calls), never a chat bridge
// that knows the speaker's id and never a group. With no entries, every
// private message without a platform id is the owner's.
type Owners struct {
	ids   map[string]bool
	names map[string]bool
}

// ParseOwners reads permissions.owners.
func ParseOwners(list []string) (Owners, error) {
	o := Owners{ids: map[string]bool{}, names: map[string]bool{}}
	for i, e := range list {
		e = strings.TrimSpace(e)
		if id, ok := strings.CutPrefix(e, "id:"); ok {
			if id == "" {
				return o, fmt.Errorf("owners[%d]: \"id:\" needs the platform id after it (id:12345)", i)
			}
			o.ids[id] = true
			continue
		}
		if e == "" {
			return o, fmt.Errorf("owners[%d]: empty; write a speaker name or id:<platform id>", i)
		}
		o.names[e] = true
	}
	return o, nil
}

// Match reports whether c is the owner.
func (o Owners) Match(c Caller) bool {
	if c.Owner {
		return true
	}
	if c.SpeakerID != "" {
		return o.ids[c.SpeakerID]
	}
	if c.Kind == "group" {
		return false
	}
	if len(o.ids) == 0 && len(o.names) == 0 {
		return true
	}
	return o.names[c.Speaker]
}

// DefaultOwner is the owner's permission object when the config sets none:
// every tool, but the owner confirms what writes, runs programs or edits
// the agent itself; custom tools may be written.
func DefaultOwner() *packets.Permission {
	return mustPermission(`{
		"tools": ["*",
			{"name": "@write", "action": "confirm"},
			{"name": "@execute", "action": "confirm"},
			{"name": "@self_edit", "action": "confirm"}],
		"self_edit": ["tools/extra/custom/*"],
		"defaultAction": "deny"}`)
}

// DefaultGuest is the permission object of everyone else when the config
// sets none: no tool that reads the owner's files, writes, runs programs,
// reaches the network, operates the computer or edits the agent.
func DefaultGuest() *packets.Permission {
	return mustPermission(`{
		"tools": ["*", "!@read", "!@write", "!@execute", "!@network", "!@operate", "!@self_edit"],
		"defaultAction": "deny"}`)
}

func mustPermission(s string) *packets.Permission {
	p := new(packets.Permission)
	if err := json.Unmarshal([]byte(s), p); err != nil {
		panic(err)
	}
	return p
}
