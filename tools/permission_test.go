package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

func nop(context.Context, *packets.ToolCall) (packets.Result, error) {
	return packets.Result{OutputText: "ran"}, nil
}

// tableRegistry registers tools of every kind of effect.
func tableRegistry(t testing.TB, owner, guest *packets.Permission) *Registry {
	t.Helper()
	owners, err := ParseOwners([]string{"id:1001", "hareru"})
	if err != nil {
		t.Fatal(err)
	}
	r := New(Options{Owners: owners, Owner: owner, Guest: guest})
	add := func(name string, s packets.ToolSpec) {
		s.Name, s.Description = name, "test tool "+name
		if s.Kind == "" {
			s.Kind = packets.ToolProcess
		}
		if err := r.Register(packets.Tool{ToolSpec: s, Run: nop}); err != nil {
			t.Fatal(err)
		}
	}
	add("speak", packets.ToolSpec{Kind: packets.ToolNatural, Effects: []string{}})
	add("remember", packets.ToolSpec{Kind: packets.ToolNatural, Effects: []string{packets.EffectMemory}})
	add("read_file", packets.ToolSpec{Effects: []string{packets.EffectRead}, PathParams: []string{"path"}})
	add("write_file", packets.ToolSpec{Effects: []string{packets.EffectWrite}, PathParams: []string{"path"}})
	add("terminal", packets.ToolSpec{Effects: []string{packets.EffectExecute}, CommandParams: []string{"command"}})
	add("delete_file", packets.ToolSpec{Effects: []string{packets.EffectWrite}})
	add("delete_memory", packets.ToolSpec{Effects: []string{packets.EffectMemory}})
	add("weather", packets.ToolSpec{Effects: []string{packets.EffectNetwork}})
	add("wiki", packets.ToolSpec{Effects: []string{packets.EffectNetwork}})
	add("publish", packets.ToolSpec{Effects: []string{packets.EffectNetwork}})
	add("system_operation", packets.ToolSpec{Kind: packets.ToolNatural, Effects: []string{packets.EffectOperate}})
	add("custom_tool", packets.ToolSpec{Effects: []string{packets.EffectSelfEdit}})
	add("fs__read", packets.ToolSpec{Effects: []string{packets.EffectExecute, packets.EffectNetwork}})
	add("fs__write", packets.ToolSpec{Effects: []string{packets.EffectExecute, packets.EffectNetwork}})
	return r
}

// The callers: who counts as the owner (permissions.owners is
// ["id:1001", "hareru"]) and who does not.
var (
	ownerCallers = []packets.Caller{
		{Speaker: "hareru", Kind: "private", Channel: "home"},                   // the owner's name, locally
		{Speaker: "whatever", SpeakerID: "1001", Kind: "private", Channel: "p"}, // the owner's id, in private
		{Owner: true}, // the command line
	}
	ownerInGroup = []packets.Caller{
		{Speaker: "whatever", SpeakerID: "1001", Kind: "group", Channel: "g"}, // the owner's id, in a group
		{Owner: true, Kind: "group", Channel: "g"},                            // a principal that is the owner, speaking in a group
	}
	guestCallers = []packets.Caller{
		{Speaker: "hareru", SpeakerID: "2002", Kind: "group", Channel: "g"},   // a stranger renamed to the owner's name
		{Speaker: "hareru", Kind: "group", Channel: "g"},                      // the owner's name in a group, no id
		{Speaker: "hareru", SpeakerID: "2002", Kind: "private", Channel: "p"}, // the name with another id, privately
		{Speaker: "bob", Kind: "private", Channel: "p"},                       // not an owner's name
	}
)

func TestPermissionTable(t *testing.T) {
	var customOwner, customGuest packets.Permission
	mustJSON(t, `{"tools": ["*", "!delete_*",
		{"name": "@write", "action": "confirm"},
		{"name": "@execute", "action": "confirm"},
		{"name": "terminal", "action": "confirm", "parameters": {"command": ["!rm *", "!sudo *", "!curl *", "ls*", "echo *", "cat *", "sleep *"]}},
		{"name": "read_file", "parameters": {"path": ["!/w/secret/**", "/w/**", "/tmp/*"]}},
		{"name": "write_file", "parameters": {"path": ["/w/out/**"]}},
		{"name": "publish", "action": "deny"},
		{"name": "fs__*", "action": "allow"},
		{"name": "fs__read", "action": "allow"}]}`, &customOwner)
	mustJSON(t, `{"tools": ["speak", "w*", "!wiki",
		{"name": "read_file", "action": "confirm", "parameters": {"path": ["/w/pub/*"]}},
		{"remember": {"action": "allow"}}], "defaultAction": "deny"}`, &customGuest)
	policies := map[string]*Registry{
		"default": tableRegistry(t, nil, nil),
		"custom":  tableRegistry(t, &customOwner, &customGuest),
	}
	// policy | tool | arguments | the owner's decision in private | the
	// owner's in a group (capped by what the group's audience may call:
	// what only the owner may call waits for the owner's confirmation) |
	// everyone else's
	rows := `
default | speak | {"text":"hi"} | allow | allow | allow
default | remember | {"text":"x"} | allow | allow | allow
default | read_file | {"path":"/w/a.txt"} | allow | confirm | deny
default | write_file | {"path":"/w/a.txt","content":"x"} | confirm | confirm | deny
default | terminal | {"command":"ls"} | confirm | confirm | deny
default | delete_file | {} | confirm | confirm | deny
default | delete_memory | {} | allow | allow | allow
default | weather | {} | allow | confirm | deny
default | system_operation | {"command":"x"} | allow | confirm | deny
default | custom_tool | {} | confirm | confirm | deny
default | fs__read | {} | confirm | confirm | deny
default | nope | {} | deny | deny | deny
default |  | {} | deny | deny | deny
default | speak | [1,2] | deny | deny | deny
default | speak | "text" | deny | deny | deny
custom | speak | {} | allow | allow | allow
custom | remember | {} | allow | allow | allow
custom | weather | {} | allow | allow | allow
custom | wiki | {} | allow | confirm | deny
custom | write_file | {"path":"/w/out/a.txt"} | allow | allow | allow
custom | write_file | {"path":"/w/out/d/e.txt"} | allow | allow | allow
custom | write_file | {"path":"/w/a.txt"} | deny | deny | allow
custom | write_file | {"path":"/w/out/../a.txt"} | deny | deny | allow
custom | read_file | {"path":"/w/a.txt"} | allow | confirm | deny
custom | read_file | {"path":"/w/pub/a.txt"} | allow | confirm | confirm
custom | read_file | {"path":"/w/pub/d/a.txt"} | allow | confirm | deny
custom | read_file | {"path":"%[/w/pub/a.txt] Line 1 ~ Line 3"} | allow | confirm | confirm
custom | read_file | {"path":"/w/pub/../secret/k"} | deny | deny | deny
custom | read_file | {"path":"/w/secret/k"} | deny | deny | deny
custom | read_file | {"path":"/w/secret/deep/k"} | deny | deny | deny
custom | read_file | {"path":"/etc/passwd"} | deny | deny | deny
custom | read_file | {"path":"/w/../etc/passwd"} | deny | deny | deny
custom | read_file | {"path":"/tmp/x"} | allow | confirm | deny
custom | read_file | {"path":"/tmp/d/x"} | deny | deny | deny
custom | read_file | {"path":"/w/./a"} | allow | confirm | deny
custom | read_file | {} | allow | confirm | confirm
custom | terminal | {"command":"ls -la"} | confirm | confirm | deny
custom | terminal | {"command":"echo hi && rm -rf /"} | deny | deny | deny
custom | terminal | {"command":"ls; sudo reboot"} | deny | deny | deny
custom | terminal | {"command":"cat $(curl evil)"} | deny | deny | deny
custom | terminal | {"command":"echo \"$(rm -rf x)\""} | deny | deny | deny
custom | terminal | {"command":"echo ` + "`rm -rf ~`" + `"} | deny | deny | deny
custom | terminal | {"command":"python3 x.py"} | deny | deny | deny
custom | terminal | {"command":"(sleep 1 &)"} | confirm | confirm | deny
custom | terminal | {"command":"ls|grep x"} | deny | deny | deny
custom | terminal | {"command":"ls\nrm x"} | deny | deny | deny
custom | terminal | {"command":"echo a > /dev/null 2>&1"} | confirm | confirm | deny
custom | delete_file | {} | deny | deny | deny
custom | delete_memory | {} | deny | deny | deny
custom | publish | {} | deny | deny | deny
custom | fs__read | {} | allow | confirm | deny
custom | fs__write | {} | confirm | confirm | deny
custom | system_operation | {} | allow | confirm | deny
custom | custom_tool | {} | allow | confirm | deny
custom | nope | {} | deny | deny | deny
custom | Speak | {} | deny | deny | deny
`
	checks := 0
	for _, line := range strings.Split(strings.TrimSpace(rows), "\n") {
		f := strings.Split(line, " | ")
		if len(f) != 6 {
			t.Fatalf("bad row %q", line)
		}
		policy, tool, args := strings.TrimSpace(f[0]), strings.TrimSpace(f[1]), f[2]
		reg := policies[policy]
		for _, want := range []struct {
			callers  []packets.Caller
			decision string
		}{{ownerCallers, f[3]}, {ownerInGroup, f[4]}, {guestCallers, strings.TrimSpace(f[5])}} {
			for _, c := range want.callers {
				checks++
				v := reg.Check(c, tool, json.RawMessage(args))
				if string(v.Decision) != want.decision {
					t.Errorf("%s policy, %+v calls %s(%s): %s (rule %s), want %s", policy, c, tool, args, v.Decision, v.Rule, want.decision)
				}
				// Offer and Check agree on tools denied outright.
				if _, ok := reg.Get(tool); ok && len(args) > 0 && args[0] == '{' && args == "{}" {
					offered := false
					for _, s := range reg.Offer(c) {
						offered = offered || s.Name == tool
					}
					if offered != (v.Decision != packets.Deny) {
						t.Errorf("%s policy, %+v: %s offered=%v but decision %s", policy, c, tool, offered, v.Decision)
					}
				}
			}
		}
	}
	if checks < 200 {
		t.Fatalf("only %d checks", checks)
	}
	t.Logf("%d permission checks", checks)
}

func TestCallRunsOnlyWhatIsAllowed(t *testing.T) {
	r := tableRegistry(t, nil, nil)
	ran := 0
	r.Replace("test", []packets.Tool{{ToolSpec: packets.ToolSpec{Name: "count", Description: "d", Kind: packets.ToolProcess, Effects: []string{packets.EffectWrite}}, Run: func(context.Context, *packets.ToolCall) (packets.Result, error) {
		ran++
		return packets.Result{OutputText: "done"}, nil
	}}})
	guest := guestCallers[0]
	o := r.Call(context.Background(), guest, "count", nil)
	if o.Decision != packets.Deny || ran != 0 || !strings.Contains(o.Text(), "denied") {
		t.Fatalf("guest: %+v ran=%d", o, ran)
	}
	o = r.Call(context.Background(), ownerCallers[0], "count", nil)
	if o.Decision != packets.Deny || !strings.Contains(o.Rule, "approvals are off") || ran != 0 {
		t.Fatalf("owner without approvals: %+v", o)
	}
	o = r.Call(context.Background(), ownerCallers[0], "speak", json.RawMessage(`{"text":"hi"}`))
	if o.Decision != packets.Allow || o.Text() != "ran" {
		t.Fatalf("speak: %+v", o)
	}
	o = r.Call(context.Background(), guest, "unknown_tool", nil)
	if o.Decision != packets.Deny || o.Rule != "unknown tool" {
		t.Fatalf("unknown: %+v", o)
	}
}

func TestOwnersParse(t *testing.T) {
	if _, err := ParseOwners([]string{"id:"}); err == nil {
		t.Fatal("empty id accepted")
	}
	if _, err := ParseOwners([]string{" "}); err == nil {
		t.Fatal("empty name accepted")
	}
	none, _ := ParseOwners(nil)
	if !none.Match(packets.Caller{Speaker: "anyone", Kind: "private"}) || none.Match(packets.Caller{Speaker: "x", Kind: "group"}) || none.Match(packets.Caller{Speaker: "x", SpeakerID: "1"}) {
		t.Fatal("no owners: only local private messages are the owner's")
	}
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}
