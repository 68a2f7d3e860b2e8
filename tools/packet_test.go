package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
	"github.com/cyan-agent/cyan/packets"
)

// TestNaturalToolsTakeThePacket: every natural tool offers the model the
// nl_packet's fields beside its aim; a call's scene, appendix and limits
// reach the tool as its packet (and its script as inputs), are checked
// with the packet's rules, are taken out of the tool's own arguments, the
// result is clipped to the limits, and the trace of the tool's model call
// shows the packet as sent.
func TestNaturalToolsTakeThePacket(t *testing.T) {
	rig := scripttest.New(t, scripttest.Options{})
	r := New(Options{})
	f := newFixture(t)
	for _, tl := range (Builtins{Scripts: rig.Lib, Paths: f.paths, Sandbox: &Sandbox{}}).Tools() {
		if err := r.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	// A natural tool that reads its own arguments strictly (as recall
	// does) and reports the packet it got.
	var got *packets.Natural
	strict := packets.Tool{ToolSpec: packets.ToolSpec{Name: "strict", Description: "a strict natural tool", Kind: packets.ToolNatural, AimParam: "prompt", Effects: []string{},
		Parameters: json.RawMessage(`{"type": "object", "properties": {"prompt": {"type": "string"}, "scene": {"type": "number"}}}`)},
		Run: func(_ context.Context, c *packets.ToolCall) (packets.Result, error) {
			var a struct {
				Prompt string   `json:"prompt"`
				Scene  *float64 `json:"scene"`
			}
			dec := json.NewDecoder(strings.NewReader(string(c.Args)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&a); err != nil {
				return packets.Result{}, err
			}
			got = c.Natural
			return packets.Result{OutputText: strings.Repeat("x", 100), OutputFile: []string{"/tmp/a", "/tmp/b"}}, nil
		}}
	if err := r.Register(strict); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(packets.Tool{ToolSpec: packets.ToolSpec{Name: "plain", Description: "a process tool", Kind: packets.ToolProcess, Effects: []string{}}, Run: func(context.Context, *packets.ToolCall) (packets.Result, error) {
		return packets.Result{}, nil
	}}); err != nil {
		t.Fatal(err)
	}

	// The schemas the model is offered.
	props := func(name string) map[string]json.RawMessage {
		s, _ := r.Get(name)
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		json.Unmarshal(s.Parameters, &schema)
		return schema.Properties
	}
	for _, f := range []string{"text", "scene", "appendix", "output_text_limit", "output_file_limit"} {
		if _, ok := props("speak")[f]; !ok {
			t.Errorf("speak does not offer %s: %v", f, props("speak"))
		}
	}
	if p := props("plain"); len(p) != 0 {
		t.Errorf("a process tool was given packet fields: %v", p)
	}
	if string(props("strict")["scene"]) != `{"type":"number"}` {
		t.Errorf("a tool's own parameter was replaced: %s", props("strict")["scene"])
	}

	owner := packets.Caller{Owner: true, Channel: "home"}
	// The packet reaches the tool; its own arguments stay its own; the
	// result is clipped.
	appendix := "%[" + f.root + "/a.txt]"
	o := r.Call(context.Background(), owner, "strict", json.RawMessage(`{"prompt": "find the file", "scene": 3, "appendix": ["`+appendix+`"], "output_text_limit": 10, "output_file_limit": ["first"]}`))
	if o.Failed() {
		t.Fatalf("strict: %s", o.Text())
	}
	if got == nil || got.Aim != "find the file" || got.Scene != "" || fmt.Sprint(got.Appendix) != "["+appendix+"]" || got.OutputTextLimit != 10 || fmt.Sprint(got.OutputFileLimit) != "[first]" {
		t.Fatalf("packet = %+v", got)
	}
	if len(got.Opened) != 1 || got.Opened[0].Ref != appendix || got.Opened[0].Text != "hello\nworld\nthird\n" {
		t.Fatalf("the appendix was not opened for the tool: %+v", got.Opened)
	}
	if n := len([]rune(o.Result.OutputText)); n != 10 || fmt.Sprint(o.Result.OutputFile) != "[/tmp/a]" {
		t.Fatalf("not clipped: %d runes, files %v", n, o.Result.OutputFile)
	}

	// The packet's rules, with their messages.
	for _, tc := range []struct{ args, want string }{
		{`{"text": "hi", "scene": ["a", "b"]}`, "scene: is a list; write one string"},
		{`{"text": "hi", "output_text_limit": -5}`, "output_text_limit: -5 is not a limit"},
		{`{"text": "hi", "appendix": "notes.md"}`, "appendix: must be a list of strings"},
		{`{"text": "hi", "output_file_limit": [` + strings.Repeat(`"f",`, packets.MaxFiles) + `"f"]}`, "output_file_limit names 513 files; at most 512"},
		{`{"text": ""}`, "aim is empty"},
		{`{"text": 3}`, "speak: text must be a string"},
	} {
		o := r.Call(context.Background(), owner, "speak", json.RawMessage(tc.args))
		if !o.Failed() || !strings.Contains(o.Error, tc.want) {
			t.Errorf("%s: %q, want %q", tc.args, o.Text(), tc.want)
		}
	}
	if n := len(rig.Named("speak")); n != 0 {
		t.Fatalf("a bad packet reached the model %d times", n)
	}

	// An appendix the caller may not read refuses the call before any
	// step: a credential, a file outside the roots, a stranger's read, the
	// owner's file in a group.
	for _, tc := range []struct {
		caller packets.Caller
		ref    string
		want   string
	}{
		{owner, "/etc/shadow", "appendix /etc/shadow:"},
		{owner, "%[" + f.root + "/.env]", "appendix %[" + f.root + "/.env]:"},
		{owner, f.outside, "appendix " + f.outside + ":"},
		{packets.Caller{Kind: "group", Channel: "qq:group:1", Speaker: "x", SpeakerID: "qq:9"}, appendix, "may not read it here"},
		// The owner's own turn in a group: the file is the owner's, the
		// step's result goes to the group, so the audience caps it.
		{packets.Caller{Owner: true, Kind: "group", Channel: "qq:group:1", Speaker: "晴", SpeakerID: "qq:1"}, appendix, "may not read it here (rule audience:"},
	} {
		o := r.Call(context.Background(), tc.caller, "speak", json.RawMessage(`{"text": "hi", "appendix": [`+strconv.Quote(tc.ref)+`]}`))
		if !o.Failed() || !strings.Contains(o.Text(), tc.want) || strings.Contains(o.Text(), secret) {
			t.Errorf("appendix %s: %q, want %q", tc.ref, o.Text(), tc.want)
		}
	}
	if n := len(rig.Named("speak")); n != 0 {
		t.Fatalf("a refused appendix reached the model %d times", n)
	}
	// An appendix it may read reaches the step's request, opened.
	rig.Fake.Enqueue(llmtest.Reply{Text: `{"speech": [{"emotion": "happy", "language": "en", "text": "hello world"}]}`})
	if o := r.Call(context.Background(), owner, "speak", json.RawMessage(`{"text": "read it out", "scene": "a quiet evening", "appendix": ["`+appendix+`"]}`)); o.Failed() {
		t.Fatalf("speak with an appendix: %s", o.Text())
	}
	if req := scripttest.Render(rig.Chats()[len(rig.Chats())-1]); !strings.Contains(req, "hello\\nworld") || !strings.Contains(req, "a quiet evening") {
		t.Fatalf("the step's request lacks the scene or the opened appendix:\n%s", req)
	}
	rig.Fake.Reset()

	// speak with a scene: the trace of its script call shows the packet.
	rig.Fake.Enqueue(llmtest.Reply{Text: `{"speech": [{"emotion": "happy", "language": "en", "text": "happy birthday!"}]}`})
	o = r.Call(context.Background(), owner, "speak", json.RawMessage(`{"text": "happy birthday!", "scene": "alice's party, everyone is singing", "output_text_limit": 200}`))
	if o.Failed() || !strings.Contains(o.Result.OutputText, "happy birthday!") {
		t.Fatalf("speak: %s", o.Text())
	}
	list, err := rig.Traces.List(generate.Filter{Name: "speak"})
	if err != nil || len(list) != 2 {
		t.Fatalf("speak traces: %v %v", list, err)
	}
	tr, err := rig.Traces.Get(list[len(list)-1].ID)
	if err != nil {
		t.Fatal(err)
	}
	var sent packets.Natural
	if err := json.Unmarshal(tr.Packet, &sent); err != nil || sent.Aim != "happy birthday!" || sent.Scene != "alice's party, everyone is singing" || sent.OutputTextLimit != 200 {
		t.Fatalf("the trace's packet: %s (%v)", tr.Packet, err)
	}
}

// TestStepsKeepTheStartersPermission: the steps of a natural tool run for
// the same caller, so a component's system_operation never reaches a tool
// its own permission denies, though the owner's would allow it.
func TestStepsKeepTheStartersPermission(t *testing.T) {
	r := New(Options{})
	ran := map[string]int{}
	for _, s := range []packets.ToolSpec{
		{Name: "read_file", Description: "read", Kind: packets.ToolProcess, Effects: []string{packets.EffectRead}},
		{Name: "terminal", Description: "run", Kind: packets.ToolProcess, Effects: []string{packets.EffectExecute}},
	} {
		name := s.Name
		if err := r.Register(packets.Tool{ToolSpec: s, Run: func(context.Context, *packets.ToolCall) (packets.Result, error) {
			ran[name]++
			return packets.Result{OutputText: "done"}, nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Register(systemOperation(nil)); err != nil {
		t.Fatal(err)
	}
	r.SetComponent("observer:tidy", r.OwnerPermission().Cap(mustPermission(`{"tools": ["system_operation", "read_file", "terminal"], "infos": []}`)))
	r.SetComponent("observer:reader", r.OwnerPermission().Cap(mustPermission(`{"tools": ["system_operation", "read_file"], "infos": []}`)))
	plan := json.RawMessage(`{"command": "look, then clean", "plan": [{"tool": "read_file", "path": "/w/a.txt"}, {"tool": "terminal", "command": "rm /w/a.txt"}]}`)
	for _, tc := range []struct {
		caller packets.Caller
		want   string
	}{
		// The owner's default confirms programs (approvals are off here,
		// so the call is refused as needing one); so does a component that
		// lists terminal: its starter's confirm still holds.
		{packets.Caller{Owner: true, Channel: "home"}, "steps need the owner's approval"},
		{packets.Caller{Owner: true, Channel: "home", Process: "observer:tidy"}, "steps need the owner's approval"},
		// A component without terminal: the whole operation is refused.
		{packets.Caller{Owner: true, Channel: "home", Process: "observer:reader"}, "nothing was done: step 2 (terminal `rm /w/a.txt`) is denied"},
	} {
		o := r.Call(context.Background(), tc.caller, "system_operation", plan)
		if !strings.Contains(o.Text(), tc.want) {
			t.Errorf("%+v: %q, want %q", tc.caller, o.Text(), tc.want)
		}
	}
	if len(ran) != 0 {
		t.Fatalf("steps ran: %v", ran)
	}
}

// FuzzNaturalOf: whatever arguments the model sends a natural tool, the
// packet is built or refused without a panic; a built one has an aim, and
// the tool's own arguments never hold the packet fields the registry added.
func FuzzNaturalOf(f *testing.F) {
	for _, s := range []string{`{"text": "hi"}`, `{"text": "hi", "scene": "s", "appendix": ["a"], "output_text_limit": 5, "output_file_limit": ["x"]}`,
		`{"aim": "a", "scene": "s"}`, `{"text": 1}`, `{"scene": ["a"]}`, `{}`, `[]`, `null`, `{"text": "x", "output_text_limit": -2}`} {
		f.Add(s)
	}
	tl := withPacketFields(packets.Tool{ToolSpec: packets.ToolSpec{Name: "t", Kind: packets.ToolNatural, AimParam: "text",
		Parameters: json.RawMessage(`{"type": "object", "properties": {"text": {"type": "string"}}}`)}})
	f.Fuzz(func(t *testing.T, args string) {
		n, own, err := naturalOf(tl, json.RawMessage(args))
		if err != nil {
			return
		}
		if strings.TrimSpace(n.Aim) == "" {
			t.Fatalf("empty aim from %q", args)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(own, &m) == nil && m["aim"] == nil {
			for _, p := range tl.packetParams {
				if _, ok := m[p]; ok {
					t.Fatalf("%s left in the tool's arguments: %s", p, own)
				}
			}
		}
	})
}
