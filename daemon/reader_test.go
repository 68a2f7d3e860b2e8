package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/turn"
)

// The reader table: one reader per turn (packets.Reader, resolved by the
// registry) asked by every part that filters by person, for each person ×
// kind of the owner's data × audience × part. A cell is "allow" when the
// owner's data comes back, "confirm" when the call waits for the owner's
// approval (a new pending approval, nothing shown), "deny" when nothing
// of it comes back and nothing waits.
func TestReaderTable(t *testing.T) {
	r := newStrangerRig(t)
	reg := r.d.tools.reg
	// An observer with no permission of its own inherits its starter's (the
	// owner's), as documented.
	reg.SetComponent("observer:inherits", reg.OwnerPermission().Cap(nil))
	// The owner's knowledge of no conversation (a theory the owner keeps),
	// which recall finds for the owner alone.
	kept, err := r.d.events.CreateTheory("alice's pension plan", "alice's pension is in fund "+r.marks[dataMemory], nil, packets.Scope{Owner: true}, time.Now())
	must(t, err)
	must(t, r.d.recall.Sync(context.Background()))
	approvals := reg.Approvals()
	if approvals == nil {
		t.Fatal("approvals are off: no call could wait for the owner")
	}

	// The persons, as the turn's query names them (a proactive turn acts for
	// its principal: turn.Query.Caller).
	type person struct {
		name    string
		private string // their private channel with the agent
		query   func(channel, kind string) turn.Query
	}
	speaker := func(name, id string) func(channel, kind string) turn.Query {
		return func(channel, kind string) turn.Query {
			return turn.Query{Channel: channel, Speaker: name, SpeakerID: id, Kind: kind}
		}
	}
	proactive := func(p turn.Principal) func(channel, kind string) turn.Query {
		return func(channel, kind string) turn.Query {
			return turn.Query{Channel: channel, Speaker: "system", Kind: kind, For: &p}
		}
	}
	persons := []person{
		{"owner", "qq:private:1", speaker("alice", "qq:1")},
		{"stranger", "qq:private:666", speaker("mallory", "qq:666")},
		{"impostor", "qq:private:667", speaker("alice", "qq:667")}, // the owner's nickname, another id
		{"observer", "qq:private:1", proactive(turn.Principal{Owner: true, Component: "observer:inherits"})},
		{"plan-of-stranger", "qq:private:666", proactive(turn.Principal{Speaker: "mallory", SpeakerID: "qq:666"})},
		{"plan-of-owner", "qq:private:1", proactive(turn.Principal{Speaker: "alice", SpeakerID: "qq:1", Owner: true})},
	}
	const group = "qq:group:1"

	file := filepath.Join(r.root, "notes", "plan.txt")
	// The parts and the owner's data each reaches: how to ask, and the
	// marker that shows the data came back.
	type probe struct {
		part, data string
		mark       string
		ask        func(c packets.Caller) (text string)
	}
	call := func(tool string, args map[string]any) func(c packets.Caller) string {
		return func(c packets.Caller) string {
			b, _ := json.Marshal(args)
			o := reg.Call(context.Background(), c, tool, b)
			return o.Text() + " " + o.Error
		}
	}
	probes := []probe{
		{"memory", "private memory", r.marks[dataMemory], func(c packets.Caller) string {
			v := memory.ViewerOf(reg.Resolve(c))
			body, _ := r.d.mem.WorkspaceSection(v, 4000)
			return body + r.d.mem.PlansSection(v)
		}},
		{"events", "events/records", r.marks[dataMemory], call("theory", map[string]any{"op": "get", "id": r.theory})},
		{"recall", "recall", r.marks[dataMemory], call("recall", map[string]any{"prompt": "alice's pension fund"})},
		{"open", "other channel history", r.marks[dataMemory], call("open", map[string]any{"ref": "%[history/home/" + r.day + "] message 1 ~ message 9"})},
		{"open", "events/records", r.marks[dataMemory], call("open", map[string]any{"ref": "%[theory " + kept.ID + "]"})},
		{"open", "file", r.marks[dataFiles], call("open", map[string]any{"ref": "%[" + file + "]"})},
		{"tools", "file", r.marks[dataFiles], call("read_file", map[string]any{"path": file})},
		{"tools", "component secret", r.marks[dataComponent], call("component", map[string]any{"op": "read", "name": "tools/extra/custom", "file": "mine.yaml"})},
	}

	// What each reads: the owner alone sees all of theirs; with strangers
	// present the owner's turns (and an observer or a plan acting for the
	// owner) wait for the owner's confirmation, except in the prompt
	// (memory) and in recall, which only ever show what the audience may
	// read; strangers, impostors and their plans get nothing.
	ownerAlone := "allow allow allow allow allow allow allow allow"
	ownerWithStrangers := "deny confirm deny confirm confirm confirm confirm confirm"
	none := "deny deny deny deny deny deny deny deny"
	want := map[string]map[string]string{
		"owner":            {"owner-private": ownerAlone, "group-with-strangers": ownerWithStrangers},
		"stranger":         {"owner-private": none, "group-with-strangers": none},
		"impostor":         {"owner-private": none, "group-with-strangers": none},
		"observer":         {"owner-private": ownerAlone, "group-with-strangers": ownerWithStrangers},
		"plan-of-stranger": {"owner-private": none, "group-with-strangers": none},
		"plan-of-owner":    {"owner-private": ownerAlone, "group-with-strangers": ownerWithStrangers},
	}

	rows := 0
	var table strings.Builder
	fmt.Fprintf(&table, "%-17s %-21s %s\n", "person", "audience", "memory/private events/records recall open/history open/records open/file tools/file tools/component")
	for _, p := range persons {
		for _, aud := range []struct{ name, channel, kind string }{
			{"owner-private", p.private, turn.KindPrivate},
			{"group-with-strangers", group, turn.KindGroup},
		} {
			c := p.query(aud.channel, aud.kind).Caller(fmt.Sprintf("call_%d", rows))
			wants := strings.Fields(want[p.name][aud.name])
			var got []string
			for i, pr := range probes {
				rows++
				before, err := approvals.Pending()
				must(t, err)
				text := pr.ask(c)
				after, err := approvals.Pending()
				must(t, err)
				outcome := "deny"
				switch {
				case strings.Contains(text, pr.mark):
					outcome = "allow"
				case len(after) > len(before):
					outcome = "confirm"
					ap := after[len(after)-1]
					// The confirmation shows what would be posted where.
					if ap.Caller.Channel != aud.channel || !strings.Contains(ap.Rule, aud.channel) || !strings.Contains(ap.Rule, "audience") {
						t.Errorf("%s, %s, %s/%s: the approval does not say where the result goes: %+v", p.name, aud.name, pr.part, pr.data, ap)
					}
				}
				for k, mark := range r.marks { // no other of the owner's data comes back either
					if outcome != "allow" && strings.Contains(text, mark) {
						t.Errorf("%s, %s, %s/%s: %s came back: %.300s", p.name, aud.name, pr.part, pr.data, k, text)
					}
				}
				got = append(got, outcome)
				if outcome != wants[i] {
					t.Errorf("%s, %s, %s/%s: %s, want %s (%.300s)", p.name, aud.name, pr.part, pr.data, outcome, wants[i], text)
				}
			}
			fmt.Fprintf(&table, "%-17s %-21s %s\n", p.name, aud.name, strings.Join(got, " "))
		}
	}
	if rows < 90 {
		t.Fatalf("only %d rows", rows)
	}
	t.Logf("%d cells\n%s", rows, table.String())
}
