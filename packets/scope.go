package packets

import (
	"errors"
	"fmt"
)

// Knowledge scopes: where the permission object's infos (what a component
// may see) and self_edit (what of itself it may change) reach the agent's
// knowledge. The seed gives the permission object an infos list, "the
// range of information it may be shown", and a self_edit list, "the range
// it may edit of itself"; cyan names each piece of knowledge for them as
//
//	<kind>:<scope>
//
// with the kinds below and a scope relative to the reader:
//
//	own            the conversation the reader serves (what was said there)
//	owner          the owner's private knowledge
//	public         the persona's knowledge, anyone's to see
//	channel:<name> another conversation, by name
//
// A piece may bear several names: an item the owner said in a group is
// "own" to that group's readers, "owner" to the owner's private ones, and
// "channel:<group>" to anyone else; a reader may see (or change) it when
// one of its names passes the list. So a stranger's conversation, with
// infos ["*:own", "*:public"] and self_edit ["memory:own", "events:own"],
// sees what was said in its group and the persona's public knowledge, and
// changes only its own conversation's memory and topics; the owner's
// ["**"] sees and changes everything; an observer's infos name the
// channels it watches ("history:channel:home").
//
// What a prompt shows is narrower still (Reader.InPrompt): a conversation's
// own knowledge, the public one, and the owner's when the owner is
// talking in private — never another conversation's, whatever the
// permission allows, so a group's chatter never enters the owner's private
// prompt unless the owner confirms it (which makes it the owner's).

// Knowledge kinds.
const (
	InfoHistory  = "history"  // what was said in a conversation
	InfoMemory   = "memory"   // workspace items and plans
	InfoEvents   = "events"   // event records and topics
	InfoObjects  = "objects"  // objects' info blocks and relation lines
	InfoTheories = "theories" // theory packets
)

// Scope says where a piece of knowledge belongs.
type Scope struct {
	// Channel is the conversation it came from; "" for knowledge of no
	// conversation (the owner's, or the persona's public knowledge).
	Channel string `json:"channel,omitempty"`
	// Owner marks the owner's private knowledge.
	Owner bool `json:"owner,omitempty"`
}

// Public reports whether s is the persona's public knowledge.
func (s Scope) Public() bool { return s.Channel == "" && !s.Owner }

// Reader is who reads or changes knowledge: a conversation (Channel, and
// whether its speaker is the owner talking in private), or a component of
// no conversation (an observer: Channel ""), under a permission object.
type Reader struct {
	Channel string
	Owner   bool // the speaker is the owner
	Private bool // a private conversation
	Perm    *Permission
}

// names lists the names a piece of kind with scope s bears for r; inPrompt
// keeps those a prompt of r's conversation may show.
func (r Reader) names(kind string, s Scope, inPrompt bool) []string {
	var out []string
	if s.Public() {
		out = append(out, kind+":public")
	}
	if s.Channel != "" && s.Channel == r.Channel {
		out = append(out, kind+":own")
	}
	if s.Owner && (!inPrompt || r.Owner && r.Private) {
		out = append(out, kind+":owner")
	}
	if s.Channel != "" && !inPrompt {
		out = append(out, kind+":channel:"+s.Channel)
	}
	return out
}

// MayRead reports whether r's permission lets it see a piece of kind with
// scope s (its infos).
func (r Reader) MayRead(kind string, s Scope) bool {
	for _, n := range r.names(kind, s, false) {
		if r.Perm.SeesInfo(n) {
			return true
		}
	}
	return false
}

// InPrompt reports whether r's prompt may show a piece of kind with scope
// s: r may read it, and it is r's conversation's own, public, or the
// owner's while the owner talks in private.
func (r Reader) InPrompt(kind string, s Scope) bool {
	for _, n := range r.names(kind, s, true) {
		if r.Perm.SeesInfo(n) {
			return true
		}
	}
	return false
}

// MayWrite reports whether r's permission lets it change (create, update,
// delete) a piece of kind with scope s (its self_edit list). The owner's
// knowledge is changed only under its "owner" name: that the owner said it
// in a group does not let the group change it.
func (r Reader) MayWrite(kind string, s Scope) bool {
	if s.Owner {
		return r.Perm.MaySelfEdit(kind + ":owner")
	}
	for _, n := range r.names(kind, s, false) {
		if r.Perm.MaySelfEdit(n) {
			return true
		}
	}
	return false
}

// WriteScope is the scope of a piece r makes: the owner's knowledge when
// the owner makes it, its conversation's otherwise.
func (r Reader) WriteScope() Scope {
	if r.Owner {
		return Scope{Channel: r.Channel, Owner: true}
	}
	return Scope{Channel: r.Channel}
}

// Cap is the permission a component p starts another with (SPEC §5,
// distribute_permission): nil inherits p's own; any other child — one of
// p's presets included — is bounded by p, so every check (tools, infos,
// self_edit) must pass both, and the started component never gets more
// than its starter. A preset's own presets are bounded the same way when
// it starts a component in turn: the bound follows the chain.
func (p *Permission) Cap(child *Permission) *Permission {
	if p == nil {
		return nil
	}
	if child == nil {
		return p
	}
	cp := *child
	cp.ceiling = p
	return &cp
}

// Hand is Cap with distribute_permission checked: when the starter p
// lists presets, a component it starts with a permission of its own must
// take one of them (else the error says so, and nothing is started);
// without presets, any permission is taken, bounded by p. nil inherits.
func (p *Permission) Hand(child *Permission) (*Permission, error) {
	if p == nil {
		return nil, errors.New("the starter has no permission object to hand on")
	}
	if child != nil && len(p.Distribute) > 0 && !p.MayDistribute(*child) {
		return nil, fmt.Errorf("its permission is not one of its starter's %d distribute_permission presets; copy one of them, or leave permission out to inherit the starter's", len(p.Distribute))
	}
	return p.Cap(child), nil
}
