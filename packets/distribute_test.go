package packets

import (
	"encoding/json"
	"testing"
)

func perm(t *testing.T, s string) *Permission {
	t.Helper()
	if s == "" {
		return nil
	}
	p := new(Permission)
	if err := json.Unmarshal([]byte(s), p); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return p
}

// The presets of the distribute table, by name ("" inherits).
var distributePresets = []struct{ name, json string }{
	{"inherit", ""},
	{"wide", `{"tools": ["*"], "infos": ["**"], "self_edit": ["**"], "defaultAction": "allow"}`},
	{"narrow", `{"tools": ["speak"], "infos": ["history:channel:home"], "self_edit": []}`},
	{"terminal", `{"tools": [{"name": "terminal", "action": "allow"}], "infos": ["memory:owner"], "self_edit": ["persona/scripts/*"]}`},
	{"not a preset", `{"tools": ["recall"], "infos": ["history:own"], "self_edit": ["memory:own"]}`},
}

// The starters of the table: each lists the wide preset (and some the
// others) among its distribute_permission presets, so the table shows
// that even a listed preset never gives more than the starter holds.
var distributeStarters = []struct{ name, json string }{
	{"owner", `{"tools": ["*", {"name": "@write", "action": "confirm"}, {"name": "@execute", "action": "confirm"}],
		"infos": ["**"], "self_edit": ["memory:**", "persona/scripts/*"], "defaultAction": "deny",
		"distribute_permission": [` + presetJSON("wide") + `, ` + presetJSON("narrow") + `, ` + presetJSON("terminal") + `]}`},
	{"guest", `{"tools": ["*", "!@read", "!@write", "!@execute"], "infos": ["*:own", "*:public"], "self_edit": ["memory:own"],
		"distribute_permission": [` + presetJSON("wide") + `]}`},
	{"observer", `{"tools": ["speak", "remember"], "infos": ["history:channel:home"], "self_edit": ["memory:own"],
		"distribute_permission": [` + presetJSON("wide") + `, ` + presetJSON("narrow") + `]}`},
	{"no presets", `{"tools": ["speak", "recall"], "infos": ["history:own"], "self_edit": []}`},
}

func presetJSON(name string) string {
	for _, p := range distributePresets {
		if p.name == name {
			return p.json
		}
	}
	panic(name)
}

// The data kinds: tool calls (with their effects), infos and self_edit parts.
var (
	distributeTools = []Subject{
		{Tool: "speak"}, {Tool: "remember", Effects: []string{"memory"}}, {Tool: "recall"},
		{Tool: "terminal", Effects: []string{"execute"}}, {Tool: "write_file", Effects: []string{"write"}},
		{Tool: "read_file", Effects: []string{"read"}},
	}
	distributeInfos = []string{"history:channel:home", "history:channel:work", "memory:owner", "history:own", "theories:public"}
	distributeEdits = []string{"memory:own", "memory:owner", "persona/scripts/x.ai.yaml", "tools/extra/custom/t.yaml"}
)

// TestHandNeverGivesMore: for every starter × preset × data kind, the
// started component is allowed a tool call, an info or a self edit only
// when both its starter and its preset allow it (a tool it may call
// without confirmation only when the starter may too); inheriting gives
// exactly the starter's; a permission that is not one of the starter's
// presets is refused when the starter lists presets, and bounded when it
// lists none. A component started by a started component is bounded by
// both.
func TestHandNeverGivesMore(t *testing.T) {
	rows := 0
	for _, s := range distributeStarters {
		starter := perm(t, s.json)
		for _, pr := range distributePresets {
			preset := perm(t, pr.json)
			got, err := starter.Hand(preset)
			refuse := preset != nil && len(starter.Distribute) > 0 && !starter.MayDistribute(*preset)
			if refuse != (err != nil) {
				t.Fatalf("%s hands %s: err %v, want refused %v", s.name, pr.name, err, refuse)
			}
			if err != nil {
				rows++
				continue
			}
			grand, _ := got.Hand(perm(t, presetJSON("wide")))
			for _, sub := range distributeTools {
				rows++
				want := starter.Check(sub).Decision.severity()
				if preset != nil {
					want = max(want, preset.Check(sub).Decision.severity())
				}
				if g := got.Check(sub).Decision.severity(); g != want {
					t.Errorf("%s → %s: %s = %s, want severity %d (starter %s)", s.name, pr.name, sub.Tool, got.Check(sub).Decision, want, starter.Check(sub).Decision)
				}
				if grand != nil && grand.Check(sub).Decision.severity() < want {
					t.Errorf("%s → %s → wide: %s = %s, more than its starters", s.name, pr.name, sub.Tool, grand.Check(sub).Decision)
				}
			}
			for _, info := range distributeInfos {
				rows++
				want := starter.SeesInfo(info) && (preset == nil || preset.SeesInfo(info))
				if g := got.SeesInfo(info); g != want {
					t.Errorf("%s → %s: sees %s = %v, want %v", s.name, pr.name, info, g, want)
				}
				if grand != nil && grand.SeesInfo(info) && !want {
					t.Errorf("%s → %s → wide: sees %s", s.name, pr.name, info)
				}
			}
			for _, part := range distributeEdits {
				rows++
				want := starter.MaySelfEdit(part) && (preset == nil || preset.MaySelfEdit(part))
				if g := got.MaySelfEdit(part); g != want {
					t.Errorf("%s → %s: self_edit %s = %v, want %v", s.name, pr.name, part, g, want)
				}
				if grand != nil && grand.MaySelfEdit(part) && !want {
					t.Errorf("%s → %s → wide: self_edit %s", s.name, pr.name, part)
				}
			}
		}
	}
	t.Logf("%d rows (%d starters × %d presets × %d data kinds, a refused hand-over one row)", rows,
		len(distributeStarters), len(distributePresets), len(distributeTools)+len(distributeInfos)+len(distributeEdits))
	// The case, spelled out: an observer that lists the wide
	// preset hands it bounded — no terminal, no owner's memory.
	obs := perm(t, distributeStarters[2].json)
	wide, err := obs.Hand(perm(t, presetJSON("wide")))
	if err != nil || wide.Check(Subject{Tool: "terminal", Effects: []string{"execute"}}).Decision != Deny || wide.SeesInfo("memory:owner") || wide.MaySelfEdit("persona/scripts/x.ai.yaml") {
		t.Fatalf("a listed wide preset exceeds its starter: %v", err)
	}
	if _, err := (*Permission)(nil).Hand(nil); err == nil {
		t.Fatal("a starter without a permission object handed one on")
	}
}
