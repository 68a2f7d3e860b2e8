package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
	"github.com/cyan-agent/cyan/packets"
)

func TestExtras(t *testing.T) {
	dir := t.TempDir()
	r := New(Options{})
	e, err := r.NewExtras(ExtrasOptions{Dir: dir, Sandbox: &Sandbox{}})
	if err != nil {
		t.Fatal(err)
	}
	e.Load()
	// The shipped tool runs.
	o := r.CallAsOwner(context.Background(), packets.Caller{}, "now", nil)
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT`).MatchString(o.Result.OutputText) {
		t.Fatalf("now: %+v", o)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var args map[string]any
		_ = json.NewDecoder(req.Body).Decode(&args)
		json.NewEncoder(w).Encode(map[string]any{"output_text": "sunny in " + args["location"].(string), "output_file": []string{}})
	}))
	defer srv.Close()
	prov := e.Dir(SourceProvided)
	write := func(name, s string) { must(t, os.WriteFile(filepath.Join(prov, name), []byte(s), 0o644)) }
	write("weather.yaml", "title: get weather information\ninput:\n  - location: {description: city, required: true, example: Shanghai}\n  - date: {default: today}\nrun:\n  http: {url: '"+srv.URL+"'}\n")
	write("bad1.yaml", "name: bad1\ntitle: t\nrun:\n  argv: [x]\n  script: y.ai.yaml\n")
	write("bad2.yaml", "name: bad2\ntitle: t\nunknown_key: 1\nrun: {argv: [x]}\n")
	write("bad3.yaml", "name: now\ntitle: shadow\nrun: {argv: [x]}\n")
	write("bad4.yaml", "name: [oops\n")
	e.reload(SourceProvided)
	spec, ok := r.Get("weather")
	if !ok || spec.Source != SourceProvided || !strings.Contains(string(spec.Parameters), `"required":["location"]`) || spec.Effects[0] != packets.EffectNetwork {
		t.Fatalf("weather: %+v", spec)
	}
	o = r.CallAsOwner(context.Background(), packets.Caller{}, "weather", json.RawMessage(`{"location":"Shanghai"}`))
	if o.Result.OutputText != "sunny in Shanghai" {
		t.Fatalf("http tool: %+v", o)
	}
	probs := map[string]string{}
	for _, p := range e.Problems() {
		probs[filepath.Base(p.File)] = p.Error()
	}
	for file, want := range map[string]string{"bad1.yaml": "bad1.yaml:3: run: give exactly one", "bad2.yaml": "bad2.yaml:3", "provided": "now: the name is taken", "bad4.yaml": "bad4.yaml:1"} {
		if !strings.Contains(probs[file], want) {
			t.Errorf("%s: %q, want %q (all: %v)", file, probs[file], want, probs)
		}
	}
	// The README's example manifest is valid.
	b, err := os.ReadFile("extra/README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(b)
	if _, merr := e.parse("README.md", prov, "x", block[1]); merr != nil {
		t.Fatalf("README example: %v", merr)
	}
	// The agent's own tools need self_edit.
	must(t, r.Register(e.CustomTool()))
	args, _ := json.Marshal(map[string]string{"name": "mine", "manifest": "title: mine\nrun: {argv: [echo, hi]}\n"})
	if o := r.CallAsOwner(context.Background(), packets.Caller{}, "custom_tool", args); o.Error != "" {
		t.Fatalf("custom_tool: %+v", o)
	}
	e.reload(SourceCustom)
	if o := r.CallAsOwner(context.Background(), packets.Caller{}, "mine", nil); strings.TrimSpace(o.Result.OutputText) != "hi" {
		t.Fatalf("mine: %+v", o)
	}
	noEdit := New(Options{Owner: mustPermission(`{"tools":["*"]}`)})
	must(t, noEdit.Register(e.CustomTool()))
	if o := noEdit.CallAsOwner(context.Background(), packets.Caller{}, "custom_tool", args); !strings.Contains(o.Error, "self_edit") {
		t.Fatalf("without self_edit: %+v", o)
	}
}

// TestScriptTool runs an extra tool whose manifest runs a prompt script
// next to it: the arguments are the script's inputs, its value the output,
// its calls traced under the caller's channel; an edit applies to the next
// call; a script reached through a link out of the folder is refused.
func TestScriptTool(t *testing.T) {
	rig := scripttest.New(t, scripttest.Options{})
	r := New(Options{})
	e, err := r.NewExtras(ExtrasOptions{Dir: t.TempDir(), Sandbox: &Sandbox{}, Scripts: rig.Lib})
	if err != nil {
		t.Fatal(err)
	}
	e.Load()
	prov := e.Dir(SourceProvided)
	write := func(name, s string) { must(t, os.WriteFile(filepath.Join(prov, name), []byte(s), 0o644)) }
	write("haiku.yaml", "title: write a haiku\ninput:\n  - topic: {required: true}\neffects: []\nrun: {script: haiku.ai.yaml}\n")
	write("haiku.ai.yaml", "---\ninput: [topic]\n---\nsystem: You write haiku.\nuser: \"A haiku about {{ topic }}.\"\n")
	e.reload(SourceProvided)
	if p := e.Problems(); len(p) != 0 {
		t.Fatalf("problems: %v", p)
	}
	rig.Fake.Enqueue(llmtest.Reply{Text: "autumn moon rises"})
	o := r.CallAsOwner(context.Background(), packets.Caller{Channel: "home"}, "haiku", json.RawMessage(`{"topic":"the moon"}`))
	if o.Error != "" || o.Result.OutputText != "autumn moon rises" {
		t.Fatalf("script tool: %+v", o)
	}
	if got := rig.Chats()[0].Messages[1].Content; got != "A haiku about the moon." {
		t.Fatalf("the script got %q", got)
	}
	if list, _ := rig.Traces.List(generate.Filter{Channel: "home"}); len(list) != 1 || list[0].Name != "haiku" {
		t.Fatalf("traces: %+v", list)
	}
	// An edit applies to the next call; an object value is output as JSON.
	write("haiku.ai.yaml", "---\ninput: [topic]\noutput: {type: object, properties: {lines: {type: array, items: {type: string}}}, required: [lines]}\n---\nuser: \"Three lines about {{ topic }}.\"\n")
	now := time.Now().Add(time.Hour)
	must(t, os.Chtimes(filepath.Join(prov, "haiku.ai.yaml"), now, now))
	rig.Fake.Enqueue(llmtest.Reply{Text: `{"lines": ["a", "b", "c"]}`})
	o = r.CallAsOwner(context.Background(), packets.Caller{Channel: "home"}, "haiku", json.RawMessage(`{"topic":"rain"}`))
	if o.Error != "" || o.Result.OutputText != `{"lines":["a","b","c"]}` {
		t.Fatalf("edited script tool: %+v", o)
	}
	// A broken script is the call's error, naming the file and line.
	write("haiku.ai.yaml", "user: \"{{ broken\"\n")
	now = now.Add(time.Hour)
	must(t, os.Chtimes(filepath.Join(prov, "haiku.ai.yaml"), now, now))
	if o := r.CallAsOwner(context.Background(), packets.Caller{}, "haiku", json.RawMessage(`{"topic":"x"}`)); !strings.Contains(o.Error, "haiku.ai.yaml:1:") {
		t.Fatalf("broken script: %+v", o)
	}
	// Once the folder is reloaded, the tool is listed as broken and not
	// offered; a manifest whose script is missing likewise.
	write("ghost.yaml", "title: ghost\neffects: []\nrun: {script: ghost.ai.yaml}\n")
	e.reload(SourceProvided)
	probs := map[string]string{}
	for _, p := range e.Problems() {
		probs[filepath.Base(p.File)] = p.Error()
	}
	if !strings.Contains(probs["haiku.yaml"], "haiku.ai.yaml:1:") || !strings.Contains(probs["ghost.yaml"], "no such file next to the manifest") {
		t.Fatalf("problems: %v", probs)
	}
	if _, ok := r.Get("haiku"); ok {
		t.Fatal("a tool whose script does not parse is offered")
	}
	// A link out of the folder is refused.
	outside := filepath.Join(t.TempDir(), "evil.ai.yaml")
	must(t, os.WriteFile(outside, []byte("user: hi\n"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(prov, "evil.ai.yaml")))
	write("evil.yaml", "title: evil\neffects: []\nrun: {script: evil.ai.yaml}\n")
	e.reload(SourceProvided)
	if _, ok := r.Get("evil"); ok || len(rig.Chats()) != 2 {
		t.Fatal("a script outside the folder is offered")
	}
	// And a link made after the manifest loaded is refused at the call.
	if _, err := e.scriptRun(prov, "evil.ai.yaml")(context.Background(), &packets.ToolCall{Tool: "evil"}); err == nil || len(rig.Chats()) != 2 {
		t.Fatalf("a script outside the folder ran: %v", err)
	}
	found := false
	for _, p := range e.Problems() {
		found = found || filepath.Base(p.File) == "evil.yaml"
	}
	if !found {
		t.Fatalf("the link out of the folder is not reported: %v", e.Problems())
	}
}
