package script

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckErrorsNameFileLineAndColumn(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"reserved label", "---\nuse:\n  - {source: text, label: system}\ninput: [text]\n---\nuser: hi\n",
			`f.ai.yaml:3:27: the context label "system" is reserved`},
		{"reserved label block", "---\ninput: [q]\nuse:\n  - source: q\n    label: Assistant\n---\nuser: hi\n",
			`f.ai.yaml:5:12: the context label "Assistant" is reserved`},
		{"unknown key", "---\nnmae: x\n---\nuser: hi\n", `f.ai.yaml:2:1: unknown key "nmae"`},
		{"unknown role", "---\nname: x\n---\nuser: hi\nbot: yo\n", `f.ai.yaml:5:1: unknown role "bot"`},
		{"directive", "user: hi\n$print: x\n", `f.ai.yaml:2:1: script directives ($print) are not supported`},
		{"group chat", "user[@dobby]: hi\n", "f.ai.yaml:1:1: group-chat roles"},
		{"system late", "user: hi\nsystem: be brief\n", "f.ai.yaml:2:1: system messages come first"},
		{"template syntax", "---\nname: x\n---\nuser: \"Hello {{ name \"\n", "f.ai.yaml:4:22: template: '}}' expected here"},
		{"template in block", "system: |-\n  line one\n  {% if x %}never closed\nuser: hi\n", "f.ai.yaml:3:25: template: Unexpected EOF"},
		{"unclosed front-matter", "---\nname: x\nuser: hi\n", "f.ai.yaml:1:1: the front-matter is not closed"},
		{"two dialogues", "user: a\n---\nuser: b\n", "f.ai.yaml:2: a script holds one dialogue"},
		{"yaml syntax", "---\nname: [x\n---\nuser: hi\n", "f.ai.yaml:"},
		{"no messages", "---\nname: x\n---\n", "f.ai.yaml:1:1: the script has no messages"},
		{"nothing to generate", "user: hi\nassistant: hello\n", "f.ai.yaml:2:1: nothing to generate"},
		{"site after assistant", "user: hi\nassistant: a\nassistant: \"[[X]]\"\n", "f.ai.yaml:3:12: the site [[X]] must follow a user message"},
		{"two sites", "user: hi\nassistant: \"[[A]] [[B]]\"\n", "f.ai.yaml:2:12: an assistant message holds one generation site"},
		{"bad site", "user: hi\nassistant: \"[[calc(1+2)]]\"\n", "is not a generation site"},
		{"one option", "user: hi\nassistant: \"[[A:|x]]\"\n", "at least two options"},
		{"random", "user: hi\nassistant: \"[[A:|x|y:random]]\"\n", "local random choice is not supported"},
		{"duplicate site", "user: a\nassistant: \"[[A]]\"\nuser: b\nassistant: \"[[A]]\"\n", "f.ai.yaml:4:12: the site [[A]] is already defined at f.ai.yaml:2"},
		{"site named like input", "---\ninput: [A]\n---\nuser: a\nassistant: \"[[A]]\"\n", "has the name of an input"},
		{"bad output", "---\noutput: {type: objekt}\n---\nuser: hi\n", "f.ai.yaml:2:9: output:"},
		{"bad input type", "---\ninput:\n  - n: {type: int}\n---\nuser: hi\n", `f.ai.yaml:3:15: type "int" is not one of`},
		{"bad default", "---\ninput:\n  - n: {type: integer, default: many}\n---\nuser: hi\n", `f.ai.yaml:3:5: input "n": the default does not fit`},
		{"use unknown source", "---\ninput: [a]\nuse: [b]\n---\nuser: hi\n", `f.ai.yaml:3:7: use: the source "b" is not an input`},
		{"attempts", "---\ngenerate: {attempts: 0}\n---\nuser: hi\n", "f.ai.yaml:2:22: attempts is a number from 1 to 10"},
		{"think", "---\ngenerate: {think: hard}\n---\nuser: hi\n", "f.ai.yaml:2:19: think must be"},
		{"budget", "---\ninput: [a]\nuse: [{source: a, budget: lots}]\n---\nuser: hi\n", `f.ai.yaml:3:27: budget: "lots" is not a number of tokens`},
		{"name", "---\nname: 3x\n---\nuser: hi\n", `f.ai.yaml:2:7: name "3x" must start with a letter`},
		{"extends unknown", "---\nextends: nothing-here\n---\nuser: hi\n", `f.ai.yaml:2:10: extends: no built-in script "nothing-here"`},
		{"system field", "system:\n  bakground: x\nuser: hi\n", `f.ai.yaml:2:3: unknown system field "bakground"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("f.ai.yaml", []byte(tt.src))
			if err == nil {
				t.Fatalf("no error; want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n  %v\nwant it to contain\n  %s", err, tt.want)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Errorf("%T is not a *script.Error", err)
			}
		})
	}
}

func TestParseForms(t *testing.T) {
	src := `---
title: Forms
input:
  - plain
  - typed: {type: number, default: 2}
---
- system: "be {{ plain }}"
- "a lone text is the user"
- role: assistant
  content: an example answer
- user: and again
`
	s, err := Parse("forms.ai.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "forms" || s.Title != "Forms" {
		t.Errorf("name %q title %q", s.Name, s.Title)
	}
	if len(s.messages) != 4 || s.messages[0].role != "user" || s.messages[1].role != "assistant" || s.messages[3].site == nil || s.messages[3].site.name != ImpliedSite {
		t.Errorf("messages: %+v", s.messages)
	}
	if got := s.Sites(); len(got) != 1 || got[0] != "RESPONSE" {
		t.Errorf("sites %v", got)
	}
	if len(s.Inputs) != 2 || s.Inputs[1].Type != "number" || s.Inputs[1].Default != 2.0 {
		t.Errorf("inputs %+v", s.Inputs)
	}
	if string(s.InputSchema()) != `{"additionalProperties":false,"properties":{"plain":{},"typed":{"default":2,"type":"number"}},"type":"object"}` {
		t.Errorf("input schema %s", s.InputSchema())
	}
}

func TestWarningsForIgnoredParameters(t *testing.T) {
	s, err := Parse("w.ai.yaml", []byte("---\nparameters: {temperature: 0.1, top_p: 0.9}\n---\nuser: hi\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], `w.ai.yaml:2:32: parameter "top_p" is not supported and is ignored`) {
		t.Errorf("warnings %q", s.Warnings)
	}
	if s.gen.temperature == nil || *s.gen.temperature != 0.1 {
		t.Error("temperature is passed on")
	}
}

func TestBuiltinsParse(t *testing.T) {
	ents, err := os.ReadDir("builtin")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), Ext) {
			continue
		}
		if _, err := LoadFile(filepath.Join("builtin", e.Name()), ""); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
	}
}

func TestExtendsByFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.ai.yaml", "---\nextends: b.ai.yaml\n---\nuser: a\n")
	write("b.ai.yaml", "---\nextends: a\n---\nuser: b\n")
	_, err := LoadFile(filepath.Join(dir, "a.ai.yaml"), "")
	if err == nil || !strings.Contains(err.Error(), "extends makes a cycle") {
		t.Errorf("cycle: %v", err)
	}
	write("c.ai.yaml", "---\nextends: ../outside.ai.yaml\n---\nuser: c\n")
	if _, err := LoadFile(filepath.Join(dir, "c.ai.yaml"), ""); err == nil || !strings.Contains(err.Error(), "leaves the script's folder") {
		t.Errorf("escape: %v", err)
	}
	write("d.ai.yaml", "---\nextends: compress\n---\nuser: more\n")
	s, err := LoadFile(filepath.Join(dir, "d.ai.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Files) != 2 || s.Files[1] != "builtin/compress.ai.yaml" || s.Name != "d" {
		t.Errorf("files %v name %q", s.Files, s.Name)
	}
}
