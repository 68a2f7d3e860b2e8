package script

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
)

func TestLibraryBuiltinAndPersonaOverride(t *testing.T) {
	r := newRig(t)
	persona := t.TempDir()
	dir := persona
	lib, err := NewLibrary(LibraryOptions{Generator: r.gen, PersonaDir: func() string { return dir }})
	if err != nil {
		t.Fatal(err)
	}
	// No scripts/ folder: the built-in compress runs.
	r.fake.Enqueue(llmtest.Reply{Text: `{"summary": "Recommended three ramen places near Shibuya."}`})
	res, err := lib.Run(context.Background(), "compress", map[string]any{"text": "Here are three ramen places near Shibuya: …", "agent_name": "青蓝"}, RunOptions{Channel: "home"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.(map[string]any)["summary"] != "Recommended three ramen places near Shibuya." || res.TraceID == "" {
		t.Errorf("result %+v", res)
	}
	sys := r.chats()[0].Messages[0].Content
	if !strings.Contains(sys, "青蓝's earlier replies") || !strings.Contains(sys, "at\nmost 160 characters") {
		t.Errorf("the built-in renders its defaults: %q", sys)
	}
	// An override in the persona's scripts/ that extends the built-in one.
	if err := os.MkdirAll(filepath.Join(persona, ScriptsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	override := filepath.Join(persona, ScriptsDir, "compress.ai.yaml")
	write := func(src string) {
		if err := os.WriteFile(override, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		// File times are coarse on some systems; make each write visible.
		now := time.Now().Add(time.Duration(len(src)) * time.Second)
		_ = os.Chtimes(override, now, now)
	}
	write("---\nextends: compress\n---\nsystem:\n  notes: [Write in English only.]\n")
	s, err := lib.Load("compress")
	if err != nil {
		t.Fatal(err)
	}
	if s.File != override || len(s.Files) != 2 || s.Files[1] != "builtin/compress.ai.yaml" {
		t.Errorf("the override extends the built-in: %q %v", s.File, s.Files)
	}
	r.fake.Enqueue(llmtest.Reply{Text: `{"summary": "x"}`})
	if _, err := lib.Run(context.Background(), "compress", map[string]any{"text": "t"}, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if sys := r.chats()[1].Messages[0].Content; !strings.HasSuffix(sys, "* Write in English only.") {
		t.Errorf("override's note: %q", sys)
	}
	// An edit is picked up; a broken edit is an error naming the file.
	write("---\nname: compress\ninput: [text]\n---\nuser: \"{{ text | upper }}\"\n")
	r.fake.Enqueue(llmtest.Reply{Text: "SHORT"})
	res, err = lib.Run(context.Background(), "compress", map[string]any{"text": "abc"}, RunOptions{})
	if err != nil || res.Value != "SHORT" || r.chats()[2].Messages[0].Content != "ABC" {
		t.Fatalf("edited override: %v %v", res, err)
	}
	write("user: \"{{ broken\"\n")
	if _, err := lib.Load("compress"); err == nil || !strings.Contains(err.Error(), override+":1:") {
		t.Errorf("broken override: %v", err)
	}
	list := lib.List()
	if len(list) == 0 || list[0].Name != "compress" || list[0].Origin != "persona" || list[0].Error == "" {
		t.Errorf("List = %+v", list)
	}
	for _, e := range list[1:] {
		if e.Origin != "builtin" || e.Error != "" {
			t.Errorf("List: %+v", e)
		}
	}
	// The built-in persona has no folder: only built-ins.
	dir = ""
	if s, err := lib.Load("compress"); err != nil || s.File != "builtin/compress.ai.yaml" {
		t.Errorf("without a persona folder: %v %v", s, err)
	}
	if _, err := lib.Load("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown: %v", err)
	}
	if _, err := lib.Load("../etc"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a path is not a name: %v", err)
	}
}

// TestBuiltinReadmeExample runs the example of builtin/README.md.
func TestBuiltinReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("builtin/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(readme), "```yaml\n")
	src, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("no yaml example in builtin/README.md")
	}
	s, err := Parse("rate.ai.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t)
	r.fake.Enqueue(llmtest.Reply{Text: `{"score": 0.9, "reason": "loves it"}`})
	res, err := s.Run(context.Background(), r.gen, map[string]any{"text": "Best phone I ever had."}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Score float64 }
	if err := res.Decode(&v); err != nil || v.Score != 0.9 {
		t.Errorf("value %s, %v", res.JSON, err)
	}
	r.fake.Enqueue(llmtest.Reply{Text: `{"score": 7}`}, llmtest.Reply{Text: `{"score": 7}`})
	if _, err := s.Run(context.Background(), r.gen, map[string]any{"text": "ok"}, RunOptions{}); err == nil || !strings.Contains(err.Error(), "maximum") {
		t.Errorf("a score over 1 fails: %v", err)
	}
}

// TestBrokenNamesTheStepsThatDoNotLoad: with no override every step's
// script loads; a broken override of one is the one listed, under the
// built-in's title, with the file and line.
func TestBrokenNamesTheStepsThatDoNotLoad(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	lib, err := NewLibrary(LibraryOptions{Generator: r.gen, PersonaDir: func() string { return dir }})
	if err != nil {
		t.Fatal(err)
	}
	if b := lib.Broken(); len(b) != 0 {
		t.Fatalf("built-ins broken: %+v", b)
	}
	os.MkdirAll(filepath.Join(dir, ScriptsDir), 0o700)
	if err := os.WriteFile(filepath.Join(dir, ScriptsDir, "remember"+Ext), []byte("user: \"{{ broken\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := lib.Broken()
	if len(b) != 1 || b[0].Name != "remember" || b[0].Title == "" || !strings.Contains(b[0].Error, "remember.ai.yaml:1:") {
		t.Fatalf("broken: %+v", b)
	}
}
