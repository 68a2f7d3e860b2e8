package tools

import (
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

// FuzzReader resolves arbitrary callers against arbitrary owner lists
// (Registry.Reader, the one reader of a turn) and checks what must hold
// whatever a caller claims: only the owner alone in a private
// conversation reads without an audience; a group always has one; a
// speaker id not among the owners' is never the owner, whatever its name;
// with an audience, the owner's knowledge and another conversation's are
// never shown unconfirmed; and the reader a call carries is the one it
// was resolved from.
func FuzzReader(f *testing.F) {
	f.Add("id:qq:1\nalice", "alice", "qq:2", "group", "qq:group:1", false, "main-virtual")
	f.Add("id:qq:1", "alice", "qq:1", "group", "qq:group:1", false, "main-virtual")
	f.Add("local", "bob", "", "private", "home", false, "")
	f.Add("alice", "alice", "", "", "", true, "observer:w")
	f.Add("id:tg:9", "x", "tg:9", "channel", "tg:1", false, "observer:w")
	f.Add("", "晴 (owner)", "qq:3", "Group", "qq:group:2", false, "main-virtual")
	f.Fuzz(func(t *testing.T, ownerList, speaker, speakerID, kind, channel string, owner bool, process string) {
		owners, err := ParseOwners(strings.Split(ownerList, "\n"))
		if err != nil {
			return // a bad list is refused at load
		}
		r := New(Options{Owners: owners})
		r.SetComponent("observer:w", r.OwnerPermission().Cap(nil))
		c := packets.Caller{Channel: channel, Speaker: speaker, SpeakerID: speakerID, Kind: kind, Owner: owner, Process: process}
		rd := r.Reader(c)
		if again := r.Reader(c); again != rd {
			t.Fatalf("resolved twice differently: %+v, %+v", rd, again)
		}
		if rd.Private != packets.Private(kind) {
			t.Fatalf("kind %q: Private %v", kind, rd.Private)
		}
		if (rd.Audience == nil) != rd.OwnerAlone() {
			t.Fatalf("%+v: audience %v but owner alone %v", c, rd.Audience, rd.OwnerAlone())
		}
		if !packets.Private(kind) && rd.Audience == nil {
			t.Fatalf("a %q conversation has no audience: %+v", kind, rd)
		}
		if !owner && speakerID != "" && !owners.ids[speakerID] && rd.Owner {
			t.Fatalf("speaker id %q is not an owner's, yet %+v is the owner", speakerID, c)
		}
		if rd.Audience != nil {
			for _, s := range []packets.Scope{{Owner: true}, {Channel: channel + "-elsewhere"}, {Channel: channel + "-elsewhere", Owner: true}} {
				for _, kind := range []string{packets.InfoHistory, packets.InfoMemory, packets.InfoEvents, packets.InfoObjects, packets.InfoTheories} {
					if rd.MayRead(kind, s) || rd.InPrompt(kind, s) {
						t.Fatalf("%+v reads %s of %+v unconfirmed before an audience", c, kind, s)
					}
					if rd.Sees(kind, s) == packets.Allow {
						t.Fatalf("%+v: Sees allows %s of %+v", c, kind, s)
					}
				}
			}
		}
		call := packets.CallOf(rd, c)
		if got := call.Reader(); got != rd {
			t.Fatalf("the call's reader %+v, resolved %+v", got, rd)
		}
		call.Confirmed = true
		if got := call.Reader(); got.Audience != nil || got.Perm != rd.Perm || got.Owner != rd.Owner {
			t.Fatalf("a confirmed call's reader %+v", got)
		}
	})
}
