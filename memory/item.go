package memory

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/packets"
)

// Kind is what an item holds.
type Kind string

const (
	KindNote Kind = "note" // a remembered fact or thought
	KindFile Kind = "file" // a file reference %[path], with an optional summary
	KindInfo Kind = "info" // reference info {source, current, extra_data}
)

// Info is reference info, in the seed's shape.
type Info struct {
	Source    []string `json:"source"`
	Current   string   `json:"current"`
	ExtraData string   `json:"extra_data"`
}

// Origin is where an item came from.
type Origin struct {
	Channel string `json:"channel"`
	Speaker string `json:"speaker,omitempty"`
	// SpeakerID is the speaker's platform id, when known: a plan's due turn
	// acts for its maker, with the maker's rights.
	SpeakerID string `json:"speaker_id,omitempty"`
	Kind      string `json:"kind"` // "private" or "group"
	// Owner is set when the owner said it (or the agent kept it in a turn
	// of the owner's).
	Owner bool `json:"owner,omitempty"`
	// MessageID is the incoming message of the turn that made the item
	// ("" for items made before this was kept, or outside a turn): a recall
	// that hits that message reviews the item (Memory.ReviewFrom).
	MessageID string `json:"message_id,omitempty"`
	// Component is the component whose turn made it ("observer:water"),
	// "" for main-virtual's: a plan it made fires under its permission,
	// never its starter's.
	Component string `json:"component,omitempty"`
}

// Viewer is who a workspace is shown to: a conversation, and whether its
// speaker is the owner talking in private.
//
// Visibility follows one rule: an item (or plan) is shown in the
// conversation it came from; the owner's own items also follow the owner
// into their other private conversations. So nothing said in a group by
// someone else — nothing a stranger could plant — ever reaches the owner's
// private prompt, and nothing private reaches a group. A Viewer with an
// empty Channel sees everything (the owner's API and command line).
//
// Perm, when set, narrows that further to what the conversation's
// permission object lets it see (its infos, packets.Reader.InPrompt), and
// decides what it may change (self_edit: "memory:own", "memory:owner").
type Viewer struct {
	Channel string
	Owner   bool
	Private bool
	Perm    *packets.Permission
	// Audience is the permission of those who read what the viewer is
	// shown besides it (packets.Reader.Audience; nil: the viewer alone).
	Audience *packets.Permission
}

// scope is where an item of origin o belongs (packets.Scope).
func (o Origin) scope() packets.Scope { return packets.Scope{Channel: o.Channel, Owner: o.Owner} }

func (v Viewer) reader() packets.Reader {
	return packets.Reader{Channel: v.Channel, Owner: v.Owner, Private: v.Private, Perm: v.Perm, Audience: v.Audience}
}

// mayChange reports whether v may change (add, pin, let go, raise)
// something of origin o.
func (v Viewer) mayChange(o Origin) bool {
	return v.Perm == nil || v.reader().MayWrite(packets.InfoMemory, o.scope())
}

// Item is one workspace item. Content is the note's text, the file's path,
// or the info's current text.
type Item struct {
	ID      string `json:"id"`
	Kind    Kind   `json:"kind"`
	Content string `json:"content"`
	// Summary describes a file reference (rendered "%[path] - summary").
	Summary string `json:"summary,omitempty"`
	Info    *Info  `json:"info,omitempty"`
	State   State  `json:"state"`
	Origin  Origin `json:"origin"`
	// InWorkspace is false once GC or the model let the item go; it stays in
	// the long-term store with its state until a user deletes it.
	InWorkspace bool `json:"in_workspace"`
	// Pinned items are never collected by passive GC.
	Pinned bool `json:"pinned,omitempty"`
	// Original is the content before active GC compressed it ("" if it
	// never did).
	Original string    `json:"original,omitempty"`
	Created  time.Time `json:"created"`
	// Left records why and when the item last left the workspace.
	Left *Departure `json:"left,omitempty"`
	// A fact that changed keeps its history (Memory.Supersede): the old
	// item is kept, out of the workspace, as what *was*, with the time it
	// stopped holding (Until) and the item that holds now
	// (SupersededBy); the new item names the one it replaced
	// (Supersedes). Nothing is deleted.
	Supersedes   string     `json:"supersedes,omitempty"`
	SupersededBy string     `json:"superseded_by,omitempty"`
	Until        *time.Time `json:"until,omitempty"`
}

// Departure records an item leaving the workspace.
type Departure struct {
	Turn   int64  `json:"turn"`
	Reason string `json:"reason"`
}

// sees reports whether v may see something of origin o.
func (v Viewer) sees(o Origin) bool {
	if v.Channel == "" {
		return true
	}
	if !(o.Channel == v.Channel || (o.Owner && v.Owner && v.Private)) {
		return false
	}
	return v.Perm == nil || v.reader().InPrompt(packets.InfoMemory, o.scope())
}

// render is the item's line in the workspace section, its id first and its
// untrusted text escaped.
func (it *Item) render() string {
	var b strings.Builder
	b.WriteString("[" + it.ID + "] ")
	switch it.Kind {
	case KindFile:
		b.WriteString("%[" + notation.Escape(oneLine(it.Content)) + "]")
		if it.Summary != "" {
			b.WriteString(" - " + notation.Escape(it.Summary))
		}
	case KindInfo:
		info := Info{Current: it.Content}
		if it.Info != nil {
			info = *it.Info
			info.Current = it.Content
		}
		if info.Source == nil {
			info.Source = []string{}
		}
		j, _ := json.Marshal(info)
		b.WriteString("reference_info: " + notation.Escape(string(j)))
	default:
		b.WriteString(notation.Escape(it.Content))
	}
	if it.Original != "" {
		b.WriteString(" (compressed)")
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
