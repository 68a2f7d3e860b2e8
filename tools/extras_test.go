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
)

func TestExtras(t *testing.T) {
	dir := t.TempDir()
	r := New(Options{})
	e, err := r.NewExtras(ExtrasOptions{Dir: dir, Sandbox: &Sandbox{}})
	if err != nil {
		t.Fatal(err)
	}
	// The shipped tool runs.
	o := r.CallAsOwner(context.Background(), Caller{}, "now", nil)
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
	if !ok || spec.Source != SourceProvided || !strings.Contains(string(spec.Parameters), `"required":["location"]`) || spec.Effects[0] != EffectNetwork {
		t.Fatalf("weather: %+v", spec)
	}
	o = r.CallAsOwner(context.Background(), Caller{}, "weather", json.RawMessage(`{"location":"Shanghai"}`))
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
	if o := r.CallAsOwner(context.Background(), Caller{}, "custom_tool", args); o.Error != "" {
		t.Fatalf("custom_tool: %+v", o)
	}
	e.reload(SourceCustom)
	if o := r.CallAsOwner(context.Background(), Caller{}, "mine", nil); strings.TrimSpace(o.Result.OutputText) != "hi" {
		t.Fatalf("mine: %+v", o)
	}
	noEdit := New(Options{Owner: mustPermission(`{"tools":["*"]}`)})
	must(t, noEdit.Register(e.CustomTool()))
	if o := noEdit.CallAsOwner(context.Background(), Caller{}, "custom_tool", args); !strings.Contains(o.Error, "self_edit") {
		t.Fatalf("without self_edit: %+v", o)
	}
}
