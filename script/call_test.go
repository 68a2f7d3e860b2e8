package script

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/internal/llmtest"
)

func TestLibraryCall(t *testing.T) {
	r := newRig(t)
	persona := t.TempDir()
	lib, err := NewLibrary(LibraryOptions{Generator: r.gen, PersonaDir: func() string { return persona }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Structured Go inputs; one the script does not declare is left out.
	type item struct {
		ID      string `json:"id"`
		Content string `json:"content"`
	}
	r.fake.Enqueue(llmtest.Reply{Text: `{"action": "add", "kind": "note", "content": "the cat is nyalia"}`})
	var out struct{ Action, Kind, Content string }
	in := map[string]any{"text": "alice's cat is called nyalia", "workspace": []item{{"w1", "alice likes tea"}}, "not_declared": 1}
	if err := lib.Call(ctx, "remember", "home", in, &out); err != nil {
		t.Fatal(err)
	}
	if out.Kind != "note" || out.Content != "the cat is nyalia" {
		t.Fatalf("decoded %+v", out)
	}
	user := r.chats()[0].Messages[1].Content
	if !strings.Contains(user, `"content": "alice likes tea"`) || strings.Contains(user, "not_declared") {
		t.Fatalf("rendered inputs: %s", user)
	}
	list, err := r.traces.List(generate.Filter{Channel: "home", Name: "remember"})
	if err != nil || len(list) != 1 {
		t.Fatalf("traces: %+v %v", list, err)
	}
	// A nil slice is a missing input, as null would be.
	r.fake.Enqueue(llmtest.Reply{Text: `{"action": "add", "kind": "note", "content": "x"}`})
	if err := lib.Call(ctx, "remember", "", map[string]any{"text": "x", "workspace": []item(nil)}, nil); err != nil {
		t.Fatalf("nil slice: %v", err)
	}
	// A declared input of the wrong type is still an input error.
	if err := lib.Call(ctx, "remember", "", map[string]any{"text": 3}, nil); !isInputError(err, "text") {
		t.Fatalf("wrong type: %v", err)
	}
	// A value that does not fit the caller's type names the script.
	r.fake.Enqueue(llmtest.Reply{Text: `{"action": "add", "kind": "note", "content": "x"}`})
	var wrong struct{ Action int }
	if err := lib.Call(ctx, "remember", "", map[string]any{"text": "x"}, &wrong); err == nil || !strings.Contains(err.Error(), "script remember") {
		t.Fatalf("undecodable value: %v", err)
	}
	// An override that takes fewer inputs is given only those.
	os.MkdirAll(filepath.Join(persona, ScriptsDir), 0o700)
	os.WriteFile(filepath.Join(persona, ScriptsDir, "remember.ai.yaml"), []byte("---\ninput: [text]\noutput: {type: object, properties: {kind: {type: string}}, required: [kind]}\n---\nuser: \"Keep: {{ text }}\"\n"), 0o600)
	r.fake.Enqueue(llmtest.Reply{Text: `{"kind": "info"}`})
	out = struct{ Action, Kind, Content string }{}
	if err := lib.Call(ctx, "remember", "home", in, &out); err != nil || out.Kind != "info" {
		t.Fatalf("override: %+v %v", out, err)
	}
	if got := r.chats()[len(r.chats())-1].Messages[0].Content; !strings.HasPrefix(got, "Instruction:\nKeep: alice's cat is called nyalia") {
		t.Fatalf("override rendered %q", got)
	}
	// CallFile runs a file on disk; CheckFile parses one.
	file := filepath.Join(t.TempDir(), "hi.ai.yaml")
	os.WriteFile(file, []byte("user: \"Say hi to {{ who }}.\"\n"), 0o600)
	r.fake.Enqueue(llmtest.Reply{Text: "hi bob"})
	var text string
	if err := lib.CallFile(ctx, file, "home", map[string]any{"who": "bob"}, &text); err != nil || text != "hi bob" {
		t.Fatalf("CallFile: %q %v", text, err)
	}
	if err := lib.CheckFile(file); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, []byte("user: \"{{ broken\"\n"), 0o600)
	if err := lib.CheckFile(file); err == nil || !strings.Contains(err.Error(), "hi.ai.yaml:1:") {
		t.Fatalf("CheckFile: %v", err)
	}
}

func isInputError(err error, input string) bool {
	ie, ok := err.(*InputError)
	return ok && ie.Input == input
}

// TestBuiltinsCheck loads every built-in script: each parses, and each of
// cyan's steps has one.
func TestBuiltinsCheck(t *testing.T) {
	r := newRig(t)
	lib, err := NewLibrary(LibraryOptions{Generator: r.gen})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range lib.List() {
		if e.Error != "" || e.Origin != "builtin" {
			t.Errorf("%s: %+v", e.Name, e)
		}
		s, err := lib.Load(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Title == "" || s.Description == "" || s.Output == nil {
			t.Errorf("%s: a built-in step says what it is and what it returns", e.Name)
		}
		got[e.Name] = true
	}
	for _, want := range []string{"compress", "remember", "compress_item", "context_operation", "event_title", "event_summary",
		"event_extraction", "speak", "system_operation", "observer_decide", "observer_speech"} {
		if !got[want] {
			t.Errorf("no built-in %s", want)
		}
	}
}
