package lorebook

import (
	"encoding/json"
	"os"
	"testing"
)

// FuzzWorldInfo: a World Info file (or RisuAI lorebook export) never panics the conversion, and what
// it gives is a character_book that Parse reads as the file read directly.
func FuzzWorldInfo(f *testing.F) {
	if real, err := os.ReadFile("../card/testdata/wild/st-eldoria.worldinfo.json"); err == nil {
		f.Add(string(real))
	}
	if real, err := os.ReadFile("../card/testdata/wild/solene-risu-ko.lorebook.json"); err == nil {
		f.Add(string(real))
	}
	if real, err := os.ReadFile("../card/testdata/wild/chub-far-domain.worldinfo.json"); err == nil {
		f.Add(string(real))
	}
	f.Add(`{"name": "C", "is_creation": false, "extensions": {"chub": {"id": 1}}, "entries": {"1": {"uid": 1, "id": 2, "key": ["", "a"], "keys": ["b"], "keysecondary": [], "secondary_keys": null, "order": 10, "insertion_order": 11, "priority": "x", "disable": true, "enabled": true, "caseSensitive": null, "case_sensitive": 1, "name": "N", "comment": "", "content": "c"}}}`)
	f.Add(`{"entries": {}}`)
	f.Add(`{"type": "risu", "ver": 1, "data": [{"key": " a, ,b ", "secondkey": "c", "selective": true, "alwaysActive": "no", "extentions": {"risu_case_sensitive": true}, "activationPercent": 50, "mode": "folder", "folder": "f", "x": 1}, {"key": 5}, {}]}`)
	f.Add(`{"type": "risu", "data": [{"key": "", "content": null, "insertorder": "9", "useRegex": true, "extentions": []}]}`)
	f.Add(`{"entries": {"0": {"uid": 0, "key": ["a", "b"], "keysecondary": ["c"], "selective": true, "selectiveLogic": 3, "content": "x", "order": 100, "position": 4, "depth": 2, "role": 1, "disable": false, "group": "g", "sticky": 2, "displayIndex": 1}}}`)
	f.Add(`{"name": "W", "entries": {"7": {"key": "a,b", "content": null, "disable": "true", "probability": "50", "useProbability": 1}, "x": {"key": [], "constant": true, "content": "c"}}}`)
	f.Add(`{"entries": {"0": {"key": [{"a": 1}]}}}`)
	f.Add(`{"entries": {"0": 5}}`)
	f.Add(`{"entries": {"1": {"uid": "1", "key": ["/re(/i"], "content": "{{char}}", "caseSensitive": null, "scanDepth": 9999, "extensions": {"x": 1}}}}`)
	f.Fuzz(func(t *testing.T, file string) {
		book, _, err := FromWorldInfo([]byte(file), "name")
		if err != nil || !IsWorldInfo([]byte(file)) {
			return
		}
		if !json.Valid(book) {
			t.Fatalf("not JSON: %s", book)
		}
		a, errA := Parse(book)
		b, errB := Parse([]byte(file))
		if (errA == nil) != (errB == nil) {
			t.Fatalf("converted %v, direct %v", errA, errB)
		}
		if errA == nil && len(a.Entries) != len(b.Entries) {
			t.Fatalf("converted %d entries, direct %d", len(a.Entries), len(b.Entries))
		}
	})
}
