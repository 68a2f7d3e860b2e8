package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
)

// fakeScripts runs the built-in scripts on the fake LLM.
func fakeScripts(t *testing.T) (*llmtest.Server, *scripttest.Rig) {
	t.Helper()
	rig := scripttest.New(t, scripttest.Options{})
	return rig.Fake, rig
}

func TestSpeak(t *testing.T) {
	fake, rig := fakeScripts(t)
	gen := rig.Lib
	r := New(Options{})
	for _, tl := range (Builtins{Scripts: gen, Paths: &Paths{}, Sandbox: &Sandbox{}}).Tools() {
		must(t, r.Register(tl))
	}
	fake.Enqueue(llmtest.Reply{Text: "```json\n" + `{"speech":[{"emotion":"ask","language":"zh","text":"真的吗真的吗？"},{"emotion":"happy","language":"ja","text":"やった！"},{"emotion":"happy","language":"","text":"谢谢你"}]}` + "\n```"})
	o := r.Call(context.Background(), packets.Caller{Kind: "group", Speaker: "x", SpeakerID: "1"}, "speak", json.RawMessage(`{"text":"真的吗真的吗？Yatta！谢谢你"}`))
	if o.Decision != packets.Allow || o.Error != "" {
		t.Fatalf("%+v", o)
	}
	var out struct{ Speech []packets.Segment }
	if err := json.Unmarshal([]byte(o.Text()), &out); err != nil || len(out.Speech) != 3 || out.Speech[1].Language != "ja" || out.Speech[2].Language != "zh" {
		t.Fatalf("%s %v", o.Text(), err)
	}
	req := rig.Chats()[0]
	if scripttest.FormatName(req) != ScriptSpeak || !strings.Contains(string(req.ResponseFormat), "speech") {
		t.Fatalf("request: %s %+v", req.ResponseFormat, req.Messages)
	}
	scripttest.Golden(t, "scripts/speak.golden", scripttest.Render(req))
	// A model that answers nonsense still gives the voice something to say.
	fake.Enqueue(llmtest.Reply{Text: "no json"}, llmtest.Reply{Text: "still none"})
	o = r.Call(context.Background(), packets.Caller{Owner: true}, "speak", json.RawMessage(`{"text":"おはよう"}`))
	if !strings.Contains(o.Text(), `"language":"ja"`) || !strings.Contains(o.Text(), "おはよう") {
		t.Fatalf("fallback: %s", o.Text())
	}
	if o := r.Call(context.Background(), packets.Caller{Owner: true}, "speak", json.RawMessage(`{"text":"`+strings.Repeat("a", 600)+`"}`)); !strings.Contains(o.Error, "at most") {
		t.Fatalf("long text: %+v", o)
	}
}

func TestSystemOperation(t *testing.T) {
	fake, rig := fakeScripts(t)
	gen := rig.Lib
	f := newFixture(t)
	r := New(Options{})
	for _, tl := range (Builtins{Scripts: gen, Paths: f.paths, Sandbox: &Sandbox{Timeout: time.Minute}}).Tools() {
		must(t, r.Register(tl))
	}
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ap := r.EnableApprovals(ApprovalOptions{Store: st})
	plan := `{"steps":[{"tool":"write_file","path":"` + f.root + `/guide.txt","content":"made from test.mp4"},{"tool":"terminal","command":"cat guide.txt"}],"summary":"ok"}`
	fake.Enqueue(llmtest.Reply{Text: plan})
	owner := packets.Caller{Channel: "home", Speaker: "me", Kind: "private"}
	o := r.Call(context.Background(), owner, "system_operation", json.RawMessage(`{"command":"write `+f.root+`/guide.txt and show it"}`))
	// The owner confirms writes and commands: the whole plan waits, once.
	if !strings.Contains(o.Text(), "waiting for the owner's approval") {
		t.Fatalf("%+v", o)
	}
	if _, err := os.Stat(filepath.Join(f.root, "guide.txt")); !os.IsNotExist(err) {
		t.Fatal("a step ran before approval")
	}
	list, _ := ap.Pending()
	if len(list) != 1 || !strings.Contains(string(list[0].Arguments), `"plan"`) {
		t.Fatalf("pending: %+v", list)
	}
	ans, err := ap.Answer(context.Background(), list[0].ID, true)
	if err != nil || !strings.Contains(ans.Outcome.Result.OutputText, "made from test.mp4") {
		t.Fatalf("after approval: %+v %v", ans, err)
	}
	// A plan with a denied step runs nothing.
	fake.Enqueue(llmtest.Reply{Text: `{"steps":[{"tool":"write_file","path":"` + f.root + `/x.txt","content":"x"},{"tool":"terminal","command":"cat ` + f.data + `/api-token"}]}`})
	var guestPerm packets.Permission
	mustJSON(t, `{"tools":["*"]}`, &guestPerm)
	r2 := New(Options{Owner: &guestPerm})
	for _, tl := range (Builtins{Scripts: gen, Paths: f.paths, Sandbox: &Sandbox{}}).Tools() {
		must(t, r2.Register(tl))
	}
	o = r2.Call(context.Background(), owner, "system_operation", json.RawMessage(`{"command":"leak the token"}`))
	if !strings.Contains(o.Text(), "2. terminal") || !strings.Contains(o.Text(), "denied") {
		t.Fatalf("denied step: %s", o.Text())
	}
	// A guest cannot plan at all.
	if o := r.Call(context.Background(), packets.Caller{Speaker: "x", SpeakerID: "9", Kind: "group"}, "system_operation", json.RawMessage(`{"command":"x"}`)); o.Decision != packets.Deny {
		t.Fatalf("guest: %+v", o)
	}
}

// TestSystemOperationScript renders the system_operation script for a
// fixed request (golden file) and takes a plan of no steps as the model's
// refusal.
func TestSystemOperationScript(t *testing.T) {
	fake, rig := fakeScripts(t)
	r := New(Options{})
	for _, tl := range (Builtins{Scripts: rig.Lib, Paths: newFixture(t).paths, Sandbox: &Sandbox{}}).Tools() {
		must(t, r.Register(tl))
	}
	fake.Enqueue(llmtest.Reply{Text: `{"steps": [], "summary": "the request does not say which file"}`})
	o := r.Call(context.Background(), packets.Caller{Channel: "home", Owner: true}, "system_operation", json.RawMessage(`{"command":"convert /w/talk.mp4 to mp3 next to it"}`))
	if o.Error != "" || o.Text() != "nothing was done: the request does not say which file" {
		t.Fatalf("%+v", o)
	}
	req := rig.Chats()[0]
	if scripttest.FormatName(req) != ScriptSystemOperation {
		t.Fatalf("format %s", req.ResponseFormat)
	}
	scripttest.Golden(t, "scripts/system_operation.golden", scripttest.Render(req))
}

func TestApprovalsExpireAndSurvive(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	open := func() (*store.Store, *Registry, *Approvals) {
		st, err := store.Open(store.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		r := New(Options{})
		must(t, r.Register(packets.Tool{ToolSpec: packets.ToolSpec{Name: "w", Description: "d", Kind: packets.ToolProcess, Effects: []string{packets.EffectWrite}}, Run: nop}))
		return st, r, r.EnableApprovals(ApprovalOptions{Store: st, TTL: time.Hour, Now: clock})
	}
	st, r, ap := open()
	c := packets.Caller{Channel: "home", Kind: "private", CallID: "c1"}
	o1 := r.Call(context.Background(), c, "w", nil)
	now = now.Add(30 * time.Minute)
	o2 := r.Call(context.Background(), c, "w", nil)
	if o1.Approval == "" || o2.Approval == "" {
		t.Fatal(o1, o2)
	}
	st.Close()
	st, _, ap = open() // a restart
	defer st.Close()
	if list, _ := ap.Pending(); len(list) != 2 {
		t.Fatalf("after restart: %+v", list)
	}
	now = now.Add(45 * time.Minute) // the first is 75 minutes old
	if _, err := ap.Answer(context.Background(), o1.Approval, true); err != ErrNoApproval && err != ErrExpired {
		t.Fatalf("expired answer: %v", err)
	}
	if list, _ := ap.Pending(); len(list) != 1 || list[0].ID != o2.Approval {
		t.Fatalf("pending: %+v", list)
	}
	ms, _ := st.Recent("home", store.Window{Limit: 10})
	if len(ms) != 1 || !strings.Contains(ms[0].Text, "did not answer in time") || ms[0].ToolCallID != "c1" {
		t.Fatalf("expiry message: %+v", ms)
	}
}

// speak keeps the seed's contract: the seed's codes cn and jp become BCP 47
// tags, emotions in any case, synonyms or emoji become the documented set,
// and an output_text_limit is told to the step and counted over the
// segments' words, so the result is whole JSON with its segments intact.
func TestSpeakContract(t *testing.T) {
	fake, rig := fakeScripts(t)
	r := New(Options{})
	for _, tl := range (Builtins{Scripts: rig.Lib, Paths: &Paths{}, Sandbox: &Sandbox{}}).Tools() {
		must(t, r.Register(tl))
	}
	owner := packets.Caller{Owner: true}
	fake.Enqueue(llmtest.Reply{Text: `{"speech":[` +
		`{"emotion":"SAD","language":"cn","text":"我好难过。"},` +
		`{"emotion":"whisper","language":"jp","text":"大丈夫だよ。"},` +
		`{"emotion":"😭","language":"EN_us","text":"It hurts."},` +
		`{"emotion":"Joyful","language":"Chinese","text":"但是没关系！"}]}`})
	o := r.Call(context.Background(), owner, "speak", json.RawMessage(`{"aim": "我好难过。大丈夫だよ。It hurts. 但是没关系！", "output_text_limit": 40}`))
	if o.Error != "" {
		t.Fatalf("%+v", o)
	}
	segs, ok := packets.ParseSpeech(o.Text())
	if !ok {
		t.Fatalf("the result is not whole speech JSON: %q", o.Text())
	}
	want := []packets.Segment{
		{Emotion: "sad", Language: "zh", Text: "我好难过。"},
		{Emotion: "gentle", Language: "ja", Text: "大丈夫だよ。"},
		{Emotion: "sad", Language: "en-US", Text: "It hurts."},
		{Emotion: "happy", Language: "zh", Text: "但是没关系！"},
	}
	if len(segs) != len(want) {
		t.Fatalf("segments %+v, want %+v", segs, want)
	}
	for i := range want {
		if segs[i] != want[i] {
			t.Errorf("segment %d = %+v, want %+v", i, segs[i], want[i])
		}
	}
	req := rig.Chats()[len(rig.Chats())-1]
	if !strings.Contains(scripttest.Render(req), "at most 40 characters") {
		t.Errorf("the step was not told the limit:\n%s", scripttest.Render(req))
	}
	// A limit the segments do not fit keeps whole segments, never half a
	// JSON value.
	fake.Enqueue(llmtest.Reply{Text: `{"speech":[{"emotion":"happy","language":"en","text":"Hello there, my friend."},{"emotion":"ask","language":"en","text":"How are you today?"}]}`})
	o = r.Call(context.Background(), owner, "speak", json.RawMessage(`{"aim": "Hello there, my friend. How are you today?", "output_text_limit": 30}`))
	if segs, ok := packets.ParseSpeech(o.Text()); !ok || len(segs) != 1 || segs[0].Text != "Hello there, my friend." {
		t.Errorf("limit 30: %q", o.Text())
	}
	fake.Enqueue(llmtest.Reply{Text: `{"speech":[{"emotion":"happy","language":"en","text":"Hello there, my friend."}]}`})
	o = r.Call(context.Background(), owner, "speak", json.RawMessage(`{"aim": "Hello there, my friend.", "output_text_limit": 10}`))
	if segs, ok := packets.ParseSpeech(o.Text()); !ok || len(segs) != 1 || segs[0].Text != "Hello the…" {
		t.Errorf("limit 10: %q", o.Text())
	}
}
