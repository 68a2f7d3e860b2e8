package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

func TestComponentsHaveABaseAndSelfEditRules(t *testing.T) {
	root := t.TempDir()
	custom := filepath.Join(root, "custom")
	persona := filepath.Join(root, "persona")
	os.MkdirAll(custom, 0o755)
	comps := []Component{
		{Name: "tools/extra/custom", Dir: func() string { return custom }, Base: ComponentBase("custom"), Edit: "custom_tool"},
		{Name: "persona/observers", Dir: func() string { return filepath.Join(persona, "observers") }, Base: ComponentBase("observers"),
			Check: func(file string, data []byte) error {
				if !strings.Contains(string(data), "name:") {
					return errors.New("name is missing")
				}
				return nil
			}},
	}
	owners, _ := ParseOwners([]string{"id:1"})
	r := New(Options{Owners: owners})
	for _, tl := range r.ComponentTools(comps) {
		must(t, r.Register(tl))
	}
	if b, err := os.ReadFile(filepath.Join(custom, "main.md")); err != nil || !strings.Contains(string(b), "tools/extra/custom") {
		t.Fatalf("custom/main.md: %v", err)
	}
	if _, err := os.Stat(filepath.Join(persona, "observers", "main.md")); err == nil {
		t.Fatal("wrote into the persona folder")
	}
	owner := packets.Caller{Channel: "home", SpeakerID: "1", Kind: "private"}
	stranger := packets.Caller{Channel: "qq:group:1", SpeakerID: "9", Kind: "group"}
	call := func(c packets.Caller, name string, args any, confirmed bool) Outcome {
		b, _ := json.Marshal(args)
		return r.call(context.Background(), c, name, b, confirmed)
	}
	if o := call(stranger, "component", map[string]string{"op": "list"}, false); o.Decision != "deny" {
		t.Fatalf("a stranger listed the components: %+v", o)
	}
	if o := call(owner, "component", map[string]string{"op": "list"}, false); o.Failed() || !strings.Contains(o.Result.OutputText, "persona/observers") {
		t.Fatalf("list: %+v", o)
	}
	if o := call(owner, "component", map[string]string{"op": "read", "name": "persona/observers"}, false); o.Failed() || !strings.Contains(o.Result.OutputText, "vision scope") {
		t.Fatalf("read: %+v", o)
	}
	good := map[string]string{"name": "persona/observers", "file": "water.yaml", "content": "name: water\n"}
	if o := call(stranger, "component_edit", good, false); o.Decision != "deny" {
		t.Fatalf("a stranger's edit: %+v", o)
	}
	if o := call(owner, "component_edit", good, false); !strings.Contains(o.Rule, "@self_edit") || !strings.Contains(o.Rule, "confirm") {
		t.Fatalf("the owner's edit is confirmed first: %+v", o)
	}
	bad := map[string]string{"name": "persona/observers", "file": "bad.yaml", "content": "triggers: []\n"}
	if o := call(owner, "component_edit", bad, true); !strings.Contains(o.Error, "name is missing") {
		t.Fatalf("a bad file: %+v", o)
	}
	if o := call(owner, "component_edit", map[string]string{"name": "persona/observers", "file": "../escape.yaml", "content": "name: x"}, true); o.Error == "" {
		t.Fatalf("a path: %+v", o)
	}
	if o := call(owner, "component_edit", map[string]string{"name": "tools/extra/custom", "file": "x.yaml", "content": "name: x"}, true); !strings.Contains(o.Error, "custom_tool") {
		t.Fatalf("custom tools go through custom_tool: %+v", o)
	}
	if o := call(owner, "component_edit", good, true); o.Failed() {
		t.Fatalf("the approved edit: %+v", o)
	}
	if b, _ := os.ReadFile(filepath.Join(persona, "observers", "water.yaml")); string(b) != "name: water\n" {
		t.Fatalf("written: %q", b)
	}
	// Without self_edit for the part, even the owner's approved edit fails.
	narrow := New(Options{Owners: owners, Owner: mustPermission(`{"tools": ["*"], "self_edit": ["persona/scripts/*"]}`)})
	for _, tl := range narrow.ComponentTools(comps) {
		must(t, narrow.Register(tl))
	}
	b, _ := json.Marshal(good)
	if o := narrow.call(context.Background(), owner, "component_edit", b, true); !strings.Contains(o.Error, "self_edit") {
		t.Fatalf("outside self_edit: %+v", o)
	}
}

// Reading a component is reading the owner's files: a guest is denied it
// (even one whose rules allow reads, for the custom tools' manifests); the
// owner reads only through the confined folder code, so a symlink a
// shared persona ships leads nowhere, and credentials and keys inside the
// folder are refused.
func TestComponentReadsAreConfined(t *testing.T) {
	root := t.TempDir()
	custom := filepath.Join(root, "custom")
	scripts := filepath.Join(root, "persona", "scripts")
	outside := filepath.Join(root, "home")
	for _, d := range []string{custom, scripts, filepath.Join(outside, ".ssh")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	write := func(p, body string) { t.Helper(); must(t, os.WriteFile(p, []byte(body), 0o600)) }
	write(filepath.Join(outside, ".ssh", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\nOUTSIDE-KEY\n")
	write(filepath.Join(outside, "notes.txt"), "OUTSIDE-NOTES")
	write(filepath.Join(custom, "weather.yaml"), "name: weather\nrun: {http: {url: \"https://x.test/?key=MANIFEST-KEY\"}}\n")
	write(filepath.Join(scripts, "greet.script"), "SCRIPT-BODY")
	write(filepath.Join(scripts, "deploy.txt"), "-----BEGIN RSA PRIVATE KEY-----\nINSIDE-KEY\n")
	write(filepath.Join(scripts, "netrc"), "placeholder")
	must(t, os.Symlink(filepath.Join(outside, ".ssh", "id_rsa"), filepath.Join(scripts, "key.script")))
	must(t, os.Symlink(filepath.Join(outside, "notes.txt"), filepath.Join(scripts, "notes.script")))
	must(t, os.Symlink(outside, filepath.Join(scripts, "home")))
	must(t, os.Symlink(filepath.Join(outside, "notes.txt"), filepath.Join(scripts, ".netrc")))

	comps := []Component{
		{Name: "tools/extra/custom", Dir: func() string { return custom }, Base: ComponentBase("custom"), Edit: "custom_tool", OwnerOnly: true},
		{Name: "persona/scripts", Dir: func() string { return scripts }, Base: ComponentBase("scripts")},
	}
	owners, _ := ParseOwners([]string{"id:1"})
	open := mustPermission(`{"tools": ["*"], "defaultAction": "deny"}`) // a guest rule set that allows reads
	for _, guest := range []*packets.Permission{nil, open} {
		r := New(Options{Owners: owners, Guest: guest})
		for _, tl := range r.ComponentTools(comps) {
			must(t, r.Register(tl))
		}
		call := func(c packets.Caller, args map[string]string) Outcome {
			b, _ := json.Marshal(args)
			return r.Call(context.Background(), c, "component", b)
		}
		owner := packets.Caller{Channel: "home", SpeakerID: "1", Kind: "private"}
		for _, c := range []packets.Caller{{Channel: "qq:group:1", SpeakerID: "9", Kind: "group"}, {Channel: "qq:private:9", SpeakerID: "9", Kind: "private"}} {
			o := call(c, map[string]string{"op": "read", "name": "tools/extra/custom", "file": "weather.yaml"})
			if strings.Contains(o.Text(), "MANIFEST-KEY") || !o.Failed() || (guest == nil && o.Decision != "deny") {
				t.Fatalf("guest rules %v, %+v read a custom manifest: %+v", guest != nil, c, o)
			}
			if guest != nil && !strings.Contains(o.Error, "only the owner") {
				t.Fatalf("a guest allowed reads still may not read custom manifests: %+v", o)
			}
		}
		if o := call(owner, map[string]string{"op": "read", "name": "tools/extra/custom", "file": "weather.yaml"}); !strings.Contains(o.Text(), "MANIFEST-KEY") {
			t.Fatalf("the owner reads the custom manifests: %+v", o)
		}
		if o := call(owner, map[string]string{"op": "read", "name": "persona/scripts", "file": "greet.script"}); o.Result.OutputText != "SCRIPT-BODY" {
			t.Fatalf("the owner reads a script: %+v", o)
		}
		for _, f := range []string{"key.script", "notes.script", "deploy.txt", "netrc", ".netrc", "home"} {
			o := call(owner, map[string]string{"op": "read", "name": "persona/scripts", "file": f})
			if !o.Failed() || strings.Contains(o.Text(), "KEY") || strings.Contains(o.Text(), "OUTSIDE") {
				if f == "netrc" && o.Result.OutputText == "placeholder" {
					continue // a plain name that is not a credential's
				}
				t.Fatalf("%s: %+v", f, o)
			}
		}
		list := call(owner, map[string]string{"op": "read", "name": "persona/scripts"}).Result.OutputText
		for _, hidden := range []string{"key.script", "notes.script", "home", ".netrc"} {
			if strings.Contains(list, hidden) {
				t.Fatalf("the listing shows the symlink %s:\n%s", hidden, list)
			}
		}
	}
	// A component folder that is itself a link out of the persona (or, with
	// no persona to be inside, any link) leads nowhere.
	linked := filepath.Join(root, "persona", "observers")
	must(t, os.Symlink(outside, linked))
	for _, c := range []Component{
		{Name: "persona/observers", Dir: func() string { return linked }, Within: func() string { return filepath.Join(root, "persona") }},
		{Name: "persona/observers", Dir: func() string { return linked }},
	} {
		if b, err := c.readFile("notes.txt"); err == nil || strings.Contains(string(b), "OUTSIDE") || len(c.files()) != 0 {
			t.Fatalf("read through a linked component folder: %q %v %v", b, err, c.files())
		}
	}
	// component_edit does not write through a symlink out of the folder.
	r := New(Options{Owners: owners})
	for _, tl := range r.ComponentTools(comps) {
		must(t, r.Register(tl))
	}
	b, _ := json.Marshal(map[string]string{"name": "persona/scripts", "file": "notes.script", "content": "OVERWRITTEN"})
	if o := r.CallAsOwner(context.Background(), packets.Caller{}, "component_edit", b); !o.Failed() {
		t.Fatalf("wrote through a symlink: %+v", o)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "notes.txt")); string(got) != "OUTSIDE-NOTES" {
		t.Fatalf("the file outside changed: %q", got)
	}
}
