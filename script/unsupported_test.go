package script

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestISDKConstructsAreErrors: every ISDK construct this layer does not
// run is an error naming the file, line and column — never text sent to
// the model. The first row is the issue's: a !fn block's JavaScript was a
// user message and the user: line after it was lost.
func TestISDKConstructsAreErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"fn block at the top", "---\nname: x\n---\n!fn |-\n  [js]function hi() { return 1 }\nuser: hello\n",
			"f.ai.yaml:4:1: !fn function blocks are not supported"},
		{"line lost after a block", "|-\n  a text block\nuser: hello\n", "f.ai.yaml:3:1: this line is outside the text block above it and would be lost"},
		{"fn block in a list", "- user: first\n- !fn |-\n    [js]function hi() {}\n- user: second\n", "f.ai.yaml:2:3: !fn function blocks are not supported"},
		{"fn as a message", "user: first\nassistant: !fn |-\n  [js]function hi() {}\n", "f.ai.yaml:2:12: !fn function blocks are not supported"},
		{"fn as a key", "user: first\n!fn : x\n", "f.ai.yaml:2:1: !fn function blocks are not supported"},
		{"fn in the front-matter", "---\nname: x\ndescription: !fn |-\n  [js]hi() {}\n---\nuser: hi\n", "f.ai.yaml:3:14: !fn function blocks are not supported"},
		{"other tag", "user: !js x = 1\n", "f.ai.yaml:1:7: the YAML tag !js is not supported"},
		{"directive", "user: hi\n$echo: x\n", "f.ai.yaml:2:1: script directives ($echo) are not supported"},
		{"directive in a list", "- user: hi\n- $set: {a: 1}\n", "f.ai.yaml:2:3: script directives ($set) are not supported"},
		{"event handler", "user: hi\n$on: {event: llmStream}\n", "f.ai.yaml:2:1: script directives ($on) are not supported"},
		{"chain key", "user: hi\n-> translator: x\n", "f.ai.yaml:2:1: script directives (-> translator) are not supported"},
		{"chain text", "- user: hi\n- -> translator(target_lang=\"pt\") -> $print\n", "f.ai.yaml:2:3: ISDK chains"},
		{"chain line", "user: |-\n  tell a joke\n  -> $print\n", "f.ai.yaml:1:7: ISDK chains"},
		{"expression", "user: ?=23+5\n", "f.ai.yaml:1:7: ISDK expressions (?=…) are not supported"},
		{"replace message", "user: hi\nassistant: \"#:[-1]Hello\"\n", "f.ai.yaml:2:12: ISDK message edits"},
		{"add message", "user: \"#+[-1:system]Be brief\"\n", "f.ai.yaml:1:7: ISDK message edits"},
		{"immediate format", "---\ninput: [d]\n---\nuser: \"!{{ d }}\"\n", "f.ai.yaml:4:7: ISDK formatting prefixes"},
		{"never format", "user: \"~{{ d }}\"\n", "f.ai.yaml:1:7: ISDK formatting prefixes"},
		{"script call in user text", "user: \"what is [[@calculator(1+2)]]?\"\n", "f.ai.yaml:1:7: ISDK script and directive calls such as [[@calculator(1+2)]]"},
		{"directive call in system", "system: \"today is [[@$date]]\"\nuser: hi\n", "f.ai.yaml:1:9: ISDK script and directive calls"},
		{"script call as a site", "user: hi\nassistant: \"[[@calc(1+2)]]\"\n", "f.ai.yaml:2:12: ISDK script and directive calls"},
		{"system note", "system:\n  notes: [\"?=1+1\"]\nuser: hi\n", "f.ai.yaml:2:11: ISDK expressions"},
		{"bias", "user: \"tell me about ((cats:2.5))\"\n", "f.ai.yaml:1:7: ISDK generation bias ((cats:2.5))"},
		{"import", "---\nimport: \"js:path\"\n---\nuser: hi\n", "f.ai.yaml:2:1: import is ISDK's (imports of code and other scripts) and not supported here"},
		{"export", "---\nexport: [\"$hi\"]\n---\nuser: hi\n", "f.ai.yaml:2:1: export is ISDK's"},
		{"initializeExec", "---\n$initializeExec: false\n---\nuser: hi\n", "f.ai.yaml:2:1: $initializeExec is ISDK's"},
		{"prompt messages", "---\nprompt: {messages: [{role: system, content: x}]}\n---\nuser: hi\n", "f.ai.yaml:2:1: prompt is ISDK's"},
		{"type", "---\ntype: char\n---\nuser: hi\n", "f.ai.yaml:2:1: type is ISDK's"},
		{"auto run", "---\nautoRunLLMIfPromptAvailable: false\n---\nuser: hi\n", "f.ai.yaml:2:1: autoRunLLMIfPromptAvailable is ISDK's"},
		{"group chat", "user[@dobby]: hi\n", "f.ai.yaml:1:1: group-chat roles"},
		{"bias percent (the seed's example)", "user: hi\nassistant: \"((happy:20%)) Let's imagine a sunny day\"\n", "f.ai.yaml:2:12: ISDK generation bias ((happy:20%))"},
		{"bias forbid", "user: \"tell a story ((!x:false))\"\n", "f.ai.yaml:1:7: ISDK generation bias ((!x:false))"},
		{"bias never", "user: \"tell a story ((gore:never))\"\n", "f.ai.yaml:1:7: ISDK generation bias ((gore:never))"},
		{"bias negative number", "system: \"((sorry:-5)) be direct\"\nuser: hi\n", "f.ai.yaml:1:9: ISDK generation bias ((sorry:-5))"},
		{"regexp replacement", "user: hi\nassistant: \"[[Answer]]\"\nuser: \"Based on: [[/<RESULT>(.+)</RESULT>/:Answer]]\"\n", "f.ai.yaml:3:7: ISDK regular-expression replacement [[/<RESULT>(.+)</RESULT>/:Answer]]"},
		{"regexp replacement with a group", "user: \"x [[/a(b)/i:VAR:1]]\"\n", "f.ai.yaml:1:7: ISDK regular-expression replacement"},
		{"addressing", "user: \"@dobby(PM), tell me a secret\"\n", "f.ai.yaml:1:7: ISDK group-chat addressing (@dobby(PM), …)"},
		{"addressing two", "user: \"@dobby, @other, hello\"\n", "f.ai.yaml:1:7: ISDK group-chat addressing (@dobby, …)"},
		{"addressing private in chinese", "user: \"@dobby(私)，你好\"\n", "f.ai.yaml:1:7: ISDK group-chat addressing"},
		{"chain mid-text to a script", "user: \"list the steps -> translator(target_lang='pt')\"\n", "f.ai.yaml:1:7: ISDK chains (-> translator("},
		{"chain mid-text to a directive", "user: \"tell a joke -> $print\"\n", "f.ai.yaml:1:7: ISDK chains (-> $p"},
		{"chain after a site", "user: hi\nassistant: \"[[AI]] -> translator\"\n", "f.ai.yaml:2:12: ISDK chains"},
		{"random choice", "user: hi\nassistant: \"[[A:|x|y:random]]\"\n", "local random choice is not supported"},
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
	// Text that only looks alike is fine.
	for _, ok := range []string{
		"user: \"an arrow -> in a sentence\"\n",
		"user: \"#1 fan, and ~ approx, and !important\"\n",
		"user: \"is x == y? (yes)\"\n",
		"user: \"a list ((like this)) in parentheses\"\n",
	} {
		if _, err := Parse("f.ai.yaml", []byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestLoadRefusesUnsupported: a persona's script with a !fn block is an
// error when the library loads it, naming its file and line; nothing
// reaches the model.
func TestLoadRefusesUnsupported(t *testing.T) {
	r := newRig(t)
	persona := t.TempDir()
	if err := os.MkdirAll(filepath.Join(persona, ScriptsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(persona, ScriptsDir, "hello.ai.yaml")
	os.WriteFile(file, []byte("---\nname: hello\n---\n!fn |-\n  [js]function hi() {}\nuser: hello\n"), 0o600)
	lib, err := NewLibrary(LibraryOptions{Generator: r.gen, PersonaDir: func() string { return persona }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = lib.Run(context.Background(), "hello", nil, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), file+":4:1: !fn function blocks are not supported") {
		t.Fatalf("run = %v", err)
	}
	if n := len(r.chats()); n != 0 {
		t.Fatalf("%d requests reached the model", n)
	}
}

// Prose that only looks like ISDK is text: an arrow between words, an
// @mention inside a sentence, a bracketed number, a mail address.
func TestISDKLookalikesAreText(t *testing.T) {
	for _, text := range []string{
		"map A -> B, then B -> C",
		"ask @dobby about it, later",
		"mail me at a@b.c, thanks",
		"2 -> 3 steps",
	} {
		src := "user: " + strconv.Quote(text) + "\n"
		if _, err := Parse("f.ai.yaml", []byte(src)); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}

// A user message after the last site is never dropped: it runs, as ISDK
// runs $AI at a script's end, and its answer is the script's value; a
// script that already names a site RESPONSE gets an error there instead.
func TestTrailingUserLineRuns(t *testing.T) {
	s, err := Parse("f.ai.yaml", []byte("user: give a word\nassistant: \"[[WORD]]\"\nuser: now use it in a sentence\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Sites(); len(got) != 2 || got[0] != "WORD" || got[1] != ImpliedSite {
		t.Fatalf("sites %v, want [WORD %s]", got, ImpliedSite)
	}
	_, err = Parse("f.ai.yaml", []byte("user: a\nassistant: \"[[RESPONSE]]\"\nuser: b\n"))
	if err == nil || !strings.Contains(err.Error(), "f.ai.yaml:3:1: this user message after the last site would be answered as [[RESPONSE]]") {
		t.Fatalf("err = %v", err)
	}
}
