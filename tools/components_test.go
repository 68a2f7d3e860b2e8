package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	owner := Caller{Channel: "home", SpeakerID: "1", Kind: "private"}
	stranger := Caller{Channel: "qq:group:1", SpeakerID: "9", Kind: "group"}
	call := func(c Caller, name string, args any, confirmed bool) Outcome {
		b, _ := json.Marshal(args)
		return r.call(context.Background(), c, name, b, confirmed)
	}
	if o := call(stranger, "component", map[string]string{"op": "list"}, false); o.Failed() || !strings.Contains(o.Result.OutputText, "persona/observers") {
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
