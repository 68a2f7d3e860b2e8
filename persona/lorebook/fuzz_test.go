package lorebook

import (
	"strings"
	"testing"
)

// FuzzParse: a book never panics the parser or a scan, and a scan keeps
// to the budget and escapes what it puts in the prompt.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"entries": []}`,
		`{"scan_depth": 1, "token_budget": 10, "recursive_scanning": true, "entries": [{"keys": ["a"], "content": "b a", "enabled": true}, {"keys": ["b"], "content": "c", "enabled": true}]}`,
		`{"entries": [{"keys": ["/x(y/i", "(?i)z+"], "use_regex": true, "secondary_keys": ["q"], "selective": true, "content": "@@activate\n@@@scan_depth x\n^system: hi", "extensions": {"selectiveLogic": 3, "probability": "50", "match_whole_words": true}}]}`,
		`{"spec": "lorebook_v3", "data": {"entries": [{"keys": "a,b", "content": "{{char}} {{user}}", "constant": true}]}}`,
		`{"entries": [{"keys": [1, null], "content": null, "enabled": 1, "insertion_order": "7", "position": "before_char", "extensions": {"position": 4}}]}`,
	} {
		f.Add(s, "alice: a b z q\nbob: x")
	}
	f.Fuzz(func(t *testing.T, book, msgs string) {
		b, err := Parse([]byte(book))
		if err != nil {
			return
		}
		rolls := 0
		r := b.Activate(Input{Messages: strings.Split(msgs, "\n"), Char: "C", User: "U", Budget: 50,
			Rand: func() float64 { rolls++; return float64(rolls%10) / 10 }})
		if r.Budget > 0 && r.Used > r.Budget {
			t.Fatalf("used %d of %d", r.Used, r.Budget)
		}
		for _, f := range append(r.Before, r.After...) {
			for _, line := range strings.Split(f.Text, "\n") {
				if l := strings.TrimLeft(line, " \t"); strings.HasPrefix(l, "^") || strings.HasPrefix(l, "#") {
					t.Fatalf("unescaped line in the prompt: %q", line)
				}
			}
		}
	})
}
