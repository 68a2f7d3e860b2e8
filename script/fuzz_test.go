package script

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary files to the script parser: it must never
// panic, and every error it reports is an *Error naming the file and a
// line inside it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"user: hi\n",
		"---\nname: x\ninput: [a, {b: {required: true, type: number}}]\noutput: {type: object}\n---\nsystem: {background: b, content: c, notes: [n]}\nuser: \"{{ a }}\"\nassistant: \"[[X:|y|z]]\"\n",
		"- system: s\n- user: \"{% for i in range(3) %}{{ i }}{% endfor %}\"\n- assistant: \"pre [[R]] post\"\n",
		"---\nuse: [{source: a, label: system, budget: 2k}]\n---\nuser: x\n",
		"---\nextends: compress\n---\nuser: more\n",
		"user: \"{{ x\"\n", "---\n---\n", "---\nname: [\n", "user: a\n---\nuser: b\n",
		"system:\n  notes: !!binary aGk=\nuser: x\n", "user: &a x\nassistant: *a\n",
		"!fn |-\n  [js]function hi() {}\nuser: hello\n", "- user: a\n- !fn |-\n    x\n", "|\n  t\n\nuser: x\n",
		"user: \"?=1+1\"\n", "user: \"[[@x(1)]] ((a:2))\"\n", "---\nimport: js:path\n---\nuser: x\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse("f.ai.yaml", []byte(src))
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				if strings.HasPrefix(err.Error(), "script: read builtin/") {
					return
				}
				t.Fatalf("%T is not a *script.Error: %v", err, err)
			}
			lines := strings.Count(strings.ReplaceAll(src, "\r\n", "\n"), "\n") + strings.Count(strings.ReplaceAll(src, "\r\n", "\n"), "\r") + 1
			if !strings.HasPrefix(se.File, "f.ai.yaml") && !strings.HasPrefix(se.File, "builtin/") {
				t.Fatalf("error names %q", se.File)
			}
			if se.File == "f.ai.yaml" && (se.Line < 0 || se.Line > lines+1) {
				t.Fatalf("line %d outside a %d-line file: %v", se.Line, lines, err)
			}
			return
		}
		if s == nil || len(s.messages) == 0 || s.messages[len(s.messages)-1].site == nil && len(s.Sites()) == 0 {
			t.Fatalf("Parse returned a script without a site: %+v", s)
		}
		_ = s.InputSchema()
	})
}
