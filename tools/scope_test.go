package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

// TestKnowledgeScopeTable is the permission table of the agent's knowledge
// (packets.Scope) under the default permission objects: for each kind of
// reader — the owner in private and in a group, strangers in that group,
// in another group and in private, a member renamed to the owner's name,
// a plan a stranger made, observers with a vision scope and without — each
// kind of knowledge of each scope, read (infos, capped by the audience),
// read after the owner confirms it (what the reader may see and its
// audience may not), shown in a prompt, and changed (self_edit).
func TestKnowledgeScopeTable(t *testing.T) {
	owners, err := ParseOwners([]string{"id:qq:1"})
	if err != nil {
		t.Fatal(err)
	}
	r := New(Options{Owners: owners})
	r.SetComponent("observer:water", r.OwnerPermission().Cap(mustPermission(`{"tools": ["speak"], "infos": ["history:channel:home"]}`)))
	r.SetComponent("observer:all", r.OwnerPermission().Cap(nil))

	scopes := map[string]packets.Scope{
		"group1":       {Channel: "qq:group:1"},
		"owner@group1": {Channel: "qq:group:1", Owner: true},
		"home":         {Channel: "home", Owner: true},
		"group2":       {Channel: "qq:group:2"},
		"private5":     {Channel: "qq:private:5"},
		"public":       {},
		"owner":        {Owner: true},
	}
	kinds := []string{packets.InfoHistory, packets.InfoMemory, packets.InfoEvents, packets.InfoObjects, packets.InfoTheories}
	// What a guest may change in its own conversation (DefaultGuest's
	// self_edit): its memory and its topics, never shared knowledge.
	guestWrites := map[string]bool{packets.InfoMemory: true, packets.InfoEvents: true}

	type want struct{ read, confirm, prompt, write string } // the scopes allowed, space-separated
	all := "group1 owner@group1 home group2 private5 public owner"
	readers := []struct {
		name   string
		caller packets.Caller
		want   want
		guest  bool
	}{
		{"owner in private", packets.Caller{Channel: "home", Speaker: "alice", SpeakerID: "qq:1", Kind: "private"},
			want{all, "", "owner@group1 home public owner", all}, false},
		{"owner in group 1", packets.Caller{Channel: "qq:group:1", Speaker: "alice", SpeakerID: "qq:1", Kind: "group"},
			want{"group1 owner@group1 public", "home group2 private5 owner", "group1 owner@group1 public", all}, false},
		{"stranger in group 1", packets.Caller{Channel: "qq:group:1", Speaker: "mallory", SpeakerID: "qq:666", Kind: "group"},
			want{"group1 owner@group1 public", "", "group1 owner@group1 public", "group1"}, true},
		{"member renamed to the owner", packets.Caller{Channel: "qq:group:1", Speaker: "alice", SpeakerID: "qq:999", Kind: "group"},
			want{"group1 owner@group1 public", "", "group1 owner@group1 public", "group1"}, true},
		{"stranger in group 2", packets.Caller{Channel: "qq:group:2", Speaker: "eve", SpeakerID: "qq:7", Kind: "group"},
			want{"group2 public", "", "group2 public", "group2"}, true},
		{"stranger in private", packets.Caller{Channel: "qq:private:5", Speaker: "bob", SpeakerID: "qq:5", Kind: "private"},
			want{"private5 public", "", "private5 public", "private5"}, true},
		{"a stranger's plan firing", packets.Caller{Channel: "qq:group:1", Speaker: "mallory", SpeakerID: "qq:666", Kind: "group", Process: "main-virtual"},
			want{"group1 owner@group1 public", "", "group1 owner@group1 public", "group1"}, true},
		{"observer with a vision scope", packets.Caller{Owner: true, Process: "observer:water"},
			want{"", "", "", ""}, false},
		{"observer bound by the owner", packets.Caller{Owner: true, Process: "observer:all"},
			want{all, "", "owner@group1 home public owner", all}, false},
	}
	rows := 0
	for _, rd := range readers {
		reader := r.Reader(rd.caller)
		for name, s := range scopes {
			for _, kind := range kinds {
				read, prompt, write := reader.MayRead(kind, s), reader.InPrompt(kind, s), reader.MayWrite(kind, s)
				confirm := reader.Sees(kind, s) == packets.Confirm
				wantRead := has(rd.want.read, name)
				if rd.caller.Process == "observer:water" {
					wantRead = kind == packets.InfoHistory && name == "home"
				}
				// The history is what was said: nobody rewrites it.
				wantWrite := has(rd.want.write, name) && (!rd.guest || guestWrites[kind]) && kind != packets.InfoHistory
				for _, c := range []struct {
					op        string
					got, want bool
				}{{"read", read, wantRead}, {"confirm", confirm, has(rd.want.confirm, name)}, {"prompt", prompt, has(rd.want.prompt, name)}, {"write", write, wantWrite}} {
					rows++
					if c.got != c.want {
						t.Errorf("%s: %s %s of %s (%+v): got %v, want %v", rd.name, c.op, kind, name, s, c.got, c.want)
					}
				}
			}
		}
	}
	if rows < 100 {
		t.Fatalf("only %d rows", rows)
	}
	t.Logf("%d rows", rows)
}

func has(list, name string) bool { return strings.Contains(" "+list+" ", " "+name+" ") }

// distribute_permission: a preset of the starter, and any other
// permission, is bounded by the starter's, tool calls included.
func TestCapBoundsAStartedComponent(t *testing.T) {
	starter := mustPermission(`{"tools": ["speak", "recall"], "infos": ["history:own", "history:channel:home"], "self_edit": ["memory:own"],
		"distribute_permission": [{"tools": ["speak"], "infos": ["history:channel:home"]}]}`)
	preset := mustPermission(`{"tools": ["speak"], "infos": ["history:channel:home"]}`)
	if got := starter.Cap(preset); got.Check(packets.Subject{Tool: "speak"}).Decision != packets.Allow || !got.SeesInfo("history:channel:home") {
		t.Fatal("a preset within the starter's rights is handed with them")
	}
	greedy := mustPermission(`{"tools": ["*"], "infos": ["**"], "self_edit": ["**"]}`)
	capped := starter.Cap(greedy)
	for _, tc := range []struct {
		what string
		got  bool
		want bool
	}{
		{"speak", capped.Check(packets.Subject{Tool: "speak"}).Decision == packets.Allow, true},
		{"terminal", capped.Check(packets.Subject{Tool: "terminal"}).Decision == packets.Allow, false},
		{"history:channel:home", capped.SeesInfo("history:channel:home"), true},
		{"memory:owner", capped.SeesInfo("memory:owner"), false},
		{"history:channel:qq:group:1", capped.SeesInfo("history:channel:qq:group:1"), false},
		{"self_edit memory:own", capped.MaySelfEdit("memory:own"), true},
		{"self_edit theories:owner", capped.MaySelfEdit("theories:owner"), false},
		{"self_edit tools/extra/custom/x", capped.MaySelfEdit("tools/extra/custom/x"), false},
	} {
		if tc.got != tc.want {
			t.Errorf("capped %s: %v, want %v", tc.what, tc.got, tc.want)
		}
	}
	// Nothing started from a nil child gains anything.
	same := starter.Cap(nil)
	b1, _ := json.Marshal(same)
	b2, _ := json.Marshal(starter)
	if string(b1) != string(b2) {
		t.Fatal(fmt.Sprintf("Cap(nil) = %s, want the starter's", b1))
	}
}
