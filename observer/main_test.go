package observer

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/tools"
)

// TestObserversDecideThroughScripts runs the observers' decisions through
// their prompt scripts on the fake LLM: a persona observer's prompt: as
// observer_decide's instruction, main-observer's own speech, and a
// persona observer that names its own script. Each request is compared
// with a golden file, traced under its channel, and charged to the
// observer's budget through the metered client.
func TestObserversDecideThroughScripts(t *testing.T) {
	gov := NewGovernor(clock.Real{}, 0, nil, nil)
	persona := t.TempDir()
	rig := scripttest.New(t, scripttest.Options{PersonaDir: persona, Wrap: func(c llm.Client) llm.Client { return Meter(c, gov) }})
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 2, 16, 15, 0, 0, 0, time.UTC)
	if err := st.Append(at, &store.Message{Channel: "home", Role: store.RoleUser, User: "alice", Kind: "private", Text: "so thirsty after the run", Time: at},
		&store.Message{Channel: "home", Role: store.RoleAssistant, User: "青蓝", Kind: "private", Text: "drink something!\nslowly", Time: at.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	o := &Main{o: MainOptions{Scripts: rig.Lib, Store: st, Perms: tools.New(tools.Options{}), Agent: func() string { return "青蓝" },
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return at.Add(2 * time.Hour) }}}
	ctx := context.Background()
	decideWith := func(name, script, prompt, account string) (bool, error) {
		decide, _ := o.speaker(name, script, prompt, []string{"home"})
		ok, _, err := decide(WithAccount(ctx, account), Firing{Observer: name})
		return ok, err
	}

	rig.Fake.Enqueue(llmtest.Reply{Text: `{"speak": true, "note": "ask whether alice drank some water"}`, Usage: llm.Usage{InputTokens: 300, OutputTokens: 20}})
	if ok, err := decideWith("water", ScriptDecide, "Remind alice to drink water when it would be welcome.", "water"); err != nil || !ok {
		t.Fatalf("water: %v %v", ok, err)
	}
	rig.Fake.Enqueue(llmtest.Reply{Text: `{"speak": false, "note": ""}`})
	if ok, err := decideWith(MainAccount+"/speech", ScriptSpeech, "", MainAccount); err != nil || ok {
		t.Fatalf("speech: %v %v", ok, err)
	}
	for _, name := range []string{ScriptDecide, ScriptSpeech} {
		reqs := rig.Named(name)
		if len(reqs) != 1 {
			t.Fatalf("%s: %d requests", name, len(reqs))
		}
		scripttest.Golden(t, "scripts/"+name+".golden", scripttest.Render(reqs[0]))
	}
	if list, _ := rig.Traces.List(generate.Filter{Channel: "home"}); len(list) != 2 {
		t.Fatalf("traces in channel home: %+v", list)
	}
	if spent, _, _ := gov.Spent("water"); spent != 320 {
		t.Fatalf("the water observer was charged %d tokens, want 320", spent)
	}

	// A persona observer may name a script of the persona's scripts/; it
	// reads the conversation as data.
	dir := filepath.Join(persona, "scripts")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "thirst.ai.yaml"), []byte(`---
input: [messages, agent_name]
output: {type: object, properties: {speak: {type: boolean}, note: {type: string}}, required: [speak, note]}
---
system: You notice thirst.
user: |-
  {% for m in messages %}
  {{ m.speaker }} said: {{ m.text }}
  {% endfor %}
  Should {{ agent_name }} bring up water?
`), 0o644)
	d := Declared{Name: "thirst", File: "thirst.yaml", Script: "thirst"}
	if err := o.checkScript(d); err != nil {
		t.Fatal(err)
	}
	rig.Fake.Enqueue(llmtest.Reply{Text: `{"speak": true, "note": "water"}`})
	if ok, err := decideWith("thirst", "thirst", "", "thirst"); err != nil || !ok {
		t.Fatalf("thirst: %v %v", ok, err)
	}
	if got := rig.Chats()[2].Messages[1].Content; !strings.HasPrefix(got, "Instruction:\nalice said: so thirsty after the run\n青蓝 said: drink something!\nslowly\nShould 青蓝 bring up water?\n\n") {
		t.Fatalf("the persona's script rendered %q", got)
	}
	// A script that is missing, or needs the instruction a file does not
	// give, keeps the observer from loading, with advice.
	if err := o.checkScript(Declared{Name: "x", File: "x.yaml", Script: "nope"}); err == nil || !strings.Contains(err.Error(), "nope.ai.yaml") {
		t.Fatalf("missing script: %v", err)
	}
	if err := o.checkScript(Declared{Name: "x", File: "x.yaml", Script: ScriptDecide}); err == nil || !strings.Contains(err.Error(), "add prompt: to x.yaml") {
		t.Fatalf("script without its instruction: %v", err)
	}
}

// TestTurnDoneOwnerAndPrivate: the after-turn work counts a turn as the
// owner's when the turn acted for the owner or its speaker is a
// configured owner (by id, never by a display name alone in a group), and
// as private unless it was in a group.
func TestTurnDoneOwnerAndPrivate(t *testing.T) {
	owners, err := tools.ParseOwners([]string{"id:qq:1"})
	if err != nil {
		t.Fatal(err)
	}
	perms := tools.New(tools.Options{Owners: owners})
	tests := []struct {
		name           string
		turn           journal.Turn
		owner, private bool
	}{
		{"the owner's id in a group", journal.Turn{Kind: "group", Speaker: "kei", SpeakerID: "qq:1"}, true, false},
		{"a stranger in private", journal.Turn{Kind: "private", Speaker: "mallory", SpeakerID: "qq:2"}, false, true},
		{"a proactive turn for the owner", journal.Turn{Owner: true}, true, true},
		{"a stranger in a group", journal.Turn{Kind: "group", Speaker: "kei", SpeakerID: "qq:3"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := tt.turn
			turn.MessageID, turn.Replies = "m1", []string{"hi", "there"}
			d := TurnDone(perms, &Event{Channel: "qq:group:9", Turn: &turn})
			if d.Owner != tt.owner || d.Private != tt.private || d.Answer != "hi\nthere" || d.MessageID != "m1" || d.Channel != "qq:group:9" {
				t.Errorf("TurnDone = %+v", d)
			}
		})
	}
}
