package lorebook

import (
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	big := strings.Repeat("x", MaxContentBytes+1)
	tests := []struct {
		name, book, want string
	}{
		{"not an object", `[1,2]`, "want a JSON object"},
		{"broken JSON", "{\n  \"entries\": [\n    {\"keys\": [\"a\"] \"content\": \"x\"}\n  ]\n}", "broken JSON at line 3"},
		{"no entries", `{"name": "x"}`, "entries: missing"},
		{"entries neither a list nor world info", `{"entries": {"a": 1}}`, `world info: entry "a": want a JSON object`},
		{"entries a number", `{"entries": 3}`, "entries: want a list"},
		{"keys of the wrong type", `{"entries": [{"keys": [{"a": 1}], "content": "x"}]}`, "entry 0: keys: want a list of texts"},
		{"content not text", `{"entries": [{"keys": ["a"], "content": 3}]}`, "content: want text, got a number"},
		{"enabled not a boolean", `{"entries": [{"keys": ["a"], "content": "x", "enabled": "maybe"}]}`, "enabled: want true or false"},
		{"oversized content", `{"entries": [{"keys": ["a"], "content": "` + big + `"}]}`, "the limit is 131072"},
		{"bad logic", `{"entries": [{"keys": ["a"], "content": "x", "extensions": {"selectiveLogic": 7}}]}`, "selectiveLogic: 7: want 0 (AND ANY)"},
		{"scan depth too deep", `{"scan_depth": 5000, "entries": []}`, "scan_depth 5000: want 0 to 1000"},
		{"unknown spec", `{"spec": "world_v9", "data": {}}`, `unknown spec "world_v9"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.book))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// TestKeylessImportedDisabled: an enabled entry that could never fire is
// kept, disabled, with a note that says so; the rest of the book stays.
func TestKeylessImportedDisabled(t *testing.T) {
	for _, book := range []string{
		`{"entries": [{"keys": [], "content": "lonely", "comment": "Orphan", "enabled": true, "insertion_order": 1, "extensions": {}}, {"keys": ["a"], "content": "x"}]}`,
		`{"entries": [{"keys": ["  ", ""], "content": "lonely", "comment": "Orphan", "enabled": true}, {"keys": ["a"], "content": "x"}]}`,
	} {
		b, err := Parse([]byte(book))
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Entries) != 2 || b.Entries[0].Enabled || !b.Entries[1].Enabled {
			t.Fatalf("entries: %+v", b.Entries)
		}
		want := "entry 0 (Orphan) has no keys and is not constant, so it could never fire: it was imported disabled"
		if len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], want) {
			t.Fatalf("warnings %q, want one saying %q", b.Warnings, want)
		}
		if r := b.Activate(Input{Messages: []string{"u: a lonely"}}); len(r.Matched) != 1 || r.Matched[0].Entry.Index != 1 {
			t.Fatalf("matched %+v", r.Matched)
		}
	}
}

func TestParseFields(t *testing.T) {
	b, err := Parse([]byte(`{
	  "name": "Eldoria", "scan_depth": 4, "token_budget": 300, "recursive_scanning": true, "extensions": {},
	  "entries": [
	    {"keys": ["castle"], "secondary_keys": ["night"], "selective": true, "content": "The castle.", "enabled": true,
	     "insertion_order": 10, "priority": 5, "id": 7, "comment": "Castle", "position": "before_char", "case_sensitive": true,
	     "extensions": {"selectiveLogic": 2, "probability": 40, "useProbability": true, "match_whole_words": true,
	                    "scan_depth": 1, "exclude_recursion": true, "prevent_recursion": true, "delay_until_recursion": 2,
	                    "case_sensitive": null, "position": 4}},
	    {"keys": "a, b", "content": "x", "enabled": false, "insertion_order": "3", "constant": "true"},
	    {"keys": [], "content": "always", "constant": true, "enabled": true, "insertion_order": 0}
	  ]}`))
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "Eldoria" || b.ScanDepth != 4 || b.TokenBudget != 300 || !b.Recursive || len(b.Entries) != 3 {
		t.Fatalf("book: %+v", b)
	}
	e := b.Entries[0]
	switch {
	case e.ID != "7" || e.Label() != "entry 7 (Castle)":
		t.Errorf("id/label: %q %q", e.ID, e.Label())
	case !e.Selective || e.Logic != NotAny || len(e.SecondaryKeys) != 1:
		t.Errorf("selective: %+v", e)
	case e.Priority == nil || *e.Priority != 5 || e.Order != 10:
		t.Errorf("order/priority: %+v", e)
	case !e.CaseSensitive: // extensions.case_sensitive null leaves the entry field
		t.Error("case_sensitive lost")
	case e.Probability != 40 || !e.UseProbability || !e.WholeWords || e.ScanDepth != 1:
		t.Errorf("extensions: %+v", e)
	case !e.ExcludeRecursion || !e.PreventRecursion || !e.DelayUntilRecursion:
		t.Errorf("recursion flags: %+v", e)
	case e.Position != After || !strings.Contains(e.PositionNote, "at a depth in the chat"):
		t.Errorf("SillyTavern position 4 should place it after, with a note: %v %q", e.Position, e.PositionNote)
	}
	e = b.Entries[1]
	if e.Enabled || !e.Constant || e.Order != 3 || len(e.Keys) != 2 || e.Keys[1].text != "b" {
		t.Errorf("lenient entry: %+v", e)
	}
	if e := b.Entries[2]; !e.Constant || e.Probability != 100 || !e.UseProbability || e.ScanDepth != -1 {
		t.Errorf("defaults: %+v", e)
	}
}

// The lorebook_v3 file of the V3 spec wraps the book in {"spec", "data"}.
func TestParseLorebookV3File(t *testing.T) {
	b, err := Parse([]byte(`{"spec": "lorebook_v3", "data": {"extensions": {}, "entries": [{"keys": ["k"], "content": "c", "extensions": {}, "enabled": true, "insertion_order": 0, "use_regex": false}]}}`))
	if err != nil || len(b.Entries) != 1 {
		t.Fatalf("%v %+v", err, b)
	}
}

// The decorator example of the V3 spec: the lines go, the content stays.
func TestDecoratorsSpecExample(t *testing.T) {
	content := "@@decorator_with_string_value value\n@@another_decorator_with_string_value value\n" +
		"@@decorator_with_number_value 4\n@@decorator_with_boolean_value true\n" +
		"@@decorator_with_multiple_values value1,value2,value3\n@@decorator_without_value\n\nSome lorebook content"
	b := mustParse(t, entryJSON(`"keys": ["k"], "content": `+jsonString(content)))
	if got := b.Entries[0].Content; got != "Some lorebook content" {
		t.Fatalf("content = %q", got)
	}
}

func TestDecorators(t *testing.T) {
	b := mustParse(t, `{"entries": [
	  {"keys": [], "content": "@@activate\nforced", "enabled": true},
	  {"keys": ["k"], "content": "@@dont_activate\nnever", "enabled": true},
	  {"keys": ["k"], "content": "@@risu_only 4\n@@@scan_depth 1\n@@position before_desc\nwith fallback", "enabled": true},
	  {"keys": ["k"], "content": "@@scan_depth 3\n@@@scan_depth 9\nno fallback", "enabled": true},
	  {"keys": ["k"], "content": "@@additional_keys sun, moon\n@@exclude_keys rain\nweather", "enabled": true}
	]}`)
	e := b.Entries
	if !e[0].activate || e[0].Content != "forced" || !e[1].dontActivate {
		t.Errorf("activate/dont_activate: %+v %+v", e[0], e[1])
	}
	if e[2].ScanDepth != 1 || e[2].Position != Before || e[2].Content != "with fallback" {
		t.Errorf("a fallback applies after an unknown decorator: %+v", e[2])
	}
	if e[3].ScanDepth != 3 {
		t.Errorf("a fallback does not apply after an honoured decorator: depth %d", e[3].ScanDepth)
	}
	if len(e[4].additional) != 2 || len(e[4].exclude) != 1 {
		t.Errorf("additional/exclude: %+v", e[4])
	}
}

func TestRegexKeys(t *testing.T) {
	b := mustParse(t, `{"entries": [
	  {"keys": ["/dra(g|k)on/i"], "content": "slash", "enabled": true},
	  {"keys": ["(?<=x)y"], "use_regex": true, "content": "lookbehind", "enabled": true},
	  {"keys": ["/(?<=x)y/"], "content": "bad slash", "enabled": true},
	  {"keys": ["Eldoria"], "use_regex": true, "content": "plain under use_regex", "enabled": true}
	]}`)
	if !b.Entries[0].Keys[0].regex || b.Entries[0].Keys[0].re == nil {
		t.Error("slash key not compiled")
	}
	if b.Entries[1].Keys[0].regex {
		t.Error("an uncompilable use_regex key should fall back to text")
	}
	if !b.Entries[2].Keys[0].regex || b.Entries[2].Keys[0].re != nil {
		t.Error("an uncompilable slash key should never match")
	}
	if b.Entries[3].Keys[0].regex {
		t.Error("a key without regex syntax stays text under use_regex")
	}
	if len(b.Warnings) != 2 || !strings.Contains(b.Warnings[0], "matched as text") || !strings.Contains(b.Warnings[1], "never matches") {
		t.Errorf("warnings: %q", b.Warnings)
	}
}

func mustParse(t *testing.T, s string) *Book {
	t.Helper()
	b, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func entryJSON(fields string) string {
	return `{"entries": [{"enabled": true, ` + fields + `}]}`
}

func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
