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

// Private reports whether a conversation of kind ("private", "group", or
// "" for none) is private: one person and the agent. It is the one "is it
// private" rule; every part asks it. A kind it does not know is a group,
// so a new kind of conversation is never taken for a private one.
func Private(kind string) bool { return kind == "" || kind == "private" }

// Reader is the one reader of a turn: who it acts for, what they may see
// and change, and who will read what it shows. It is resolved once when the
// turn starts (NewReader, through the tools' registry) and carried by the
// turn; memory's workspace, the event log, recall, the open tool, the tools'
// rules, plans and observers all ask it.
//
// A reader is a conversation (Channel, and whether its speaker is the
// owner, and whether it is private), or a component of no conversation
// (an observer: Channel ""), under a permission object.
//
// Audience is the cap: the permission of the people who will read the
// turn's result besides the reader. It is nil only when the reader alone
// reads it — the owner talking in private, a component of no conversation,
// or a call the owner confirmed. Anywhere else (a group, or a private
// conversation with someone who is not the owner) it is everyone else's
// permission object, and nothing is shown that they may not read: what the
// reader may see and its audience may not needs the owner's confirmation
// (Sees says Confirm), so the owner's turn in a group, an observer or a
// plan speaking there, never posts the owner's knowledge unasked.
type Reader struct {
	Channel string
	Owner   bool // the speaker (or the principal) is the owner
	Private bool // a private conversation, or none at all (Private)
	Perm    *Permission
	// Speaker and SpeakerID name whom the turn acts for; Component is the
	// component (an observer) whose own permission object it runs under.
	Speaker, SpeakerID, Component string
	// Audience is the permission of those who read the result besides the
	// reader (nil: the reader alone).
	Audience *Permission
}

// NewReader resolves a caller once: owner says whether it is the owner
// (the configured owners, or a trusted local caller), perm is its
// permission object, component the component it runs as ("" for
// main-virtual), and guest the permission object of everyone else — the
// audience of every conversation the owner is not alone in.
func NewReader(c Caller, owner bool, perm *Permission, component string, guest *Permission) Reader {
	r := Reader{Channel: c.Channel, Owner: owner, Private: Private(c.Kind), Perm: perm,
		Speaker: c.Speaker, SpeakerID: c.SpeakerID, Component: component}
	if !r.OwnerAlone() {
		r.Audience = guest
		if r.Audience == nil { // no one else may read anything
			r.Audience = &Permission{}
		}
	}
	return r
}

// OwnerAlone reports whether the owner alone reads what the reader is
// shown: the owner talking in private, or a component of no conversation
// acting for the owner.
func (r Reader) OwnerAlone() bool { return r.Owner && r.Private }

// Confirmed is r once the owner confirmed what it reads now: the audience
// cap is lifted, the reader's own permission still decides.
func (r Reader) Confirmed() Reader {
	r.Audience = nil
	return r
}

// audience is r's audience as a reader of its conversation.
func (r Reader) audience() Reader { return Reader{Channel: r.Channel, Perm: r.Audience} }

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

// sees reports whether r's own permission passes one of the names.
func (r Reader) sees(kind string, s Scope, inPrompt bool) bool {
	for _, n := range r.names(kind, s, inPrompt) {
		if r.Perm.SeesInfo(n) {
			return true
		}
	}
	return false
}

// Sees decides whether r may be shown a piece of kind with scope s: Deny
// when its permission's infos do not reach it, Confirm when they do but
// its audience's do not (the owner confirms before it is shown there),
// Allow otherwise.
func (r Reader) Sees(kind string, s Scope) Decision {
	switch {
	case !r.sees(kind, s, false):
		return Deny
	case r.Audience != nil && !r.audience().sees(kind, s, false):
		return Confirm
	}
	return Allow
}

// MayRead reports whether r may be shown a piece of kind with scope s now,
// without asking: its permission lets it see it, and so does its audience's
// (Sees is Allow).
func (r Reader) MayRead(kind string, s Scope) bool { return r.Sees(kind, s) == Allow }

// InPrompt reports whether r's prompt may show a piece of kind with scope
// s: r may read it, and it is r's conversation's own, public, or the
// owner's while the owner talks in private — and its audience may read it.
func (r Reader) InPrompt(kind string, s Scope) bool {
	return r.sees(kind, s, true) && (r.Audience == nil || r.audience().sees(kind, s, true))
}

// Withheld is the error of a read that r may make but its audience may not
// see (Sees is Confirm): what names the data. The tools' registry parks the
// call that met it for the owner's confirmation, showing where its result
// would be posted, and runs it again without the cap once confirmed.
func (r Reader) Withheld(what string) error {
	return &AudienceError{What: what, Channel: r.Channel}
}

// AudienceError is a read withheld from a turn's audience (Reader.Withheld).
type AudienceError struct {
	What    string // the data, as the call named it
	Channel string // where the result would be posted
}

func (e *AudienceError) Error() string {
	return fmt.Sprintf("%s is the owner's and would be posted in %s, where others read it; it waits for the owner's confirmation", e.What, e.Channel)
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
