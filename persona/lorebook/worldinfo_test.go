package lorebook

import (
	"strings"
	"testing"
)

// TestWorldInfoBookNames: the character_book names of World Info fields
// beside them (as Chub writes) are copies, noted only when they differ; on
// their own they are read; name titles the entry.
func TestWorldInfoBookNames(t *testing.T) {
	file := `{"entries": {
		"0": {"uid": 0, "key": ["a"], "keys": ["b"], "order": 5, "insertion_order": 5, "priority": 5, "disable": false, "enabled": true, "caseSensitive": null, "case_sensitive": true, "name": "First", "content": "x"},
		"1": {"keys": ["c"], "insertion_order": 7, "enabled": false, "id": 9, "content": "y"}}}`
	raw, notes, err := FromWorldInfo([]byte(file), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `"keys" differs from its "key"; SillyTavern reads "key"`) {
		t.Fatalf("notes %q", notes)
	}
	b, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	first, second := b.Entries[0], b.Entries[1]
	if first.Label() != "entry 0 (First)" || len(first.Keys) != 1 || first.Keys[0].orig != "a" || !first.CaseSensitive || !first.Enabled {
		t.Errorf("first: %s %+v case %v enabled %v", first.Label(), first.Keys, first.CaseSensitive, first.Enabled)
	}
	if second.Label() != "entry 9" || len(second.Keys) != 1 || second.Keys[0].orig != "c" || second.Enabled || second.Order != 7 {
		t.Errorf("second: %s %+v enabled %v order %v", second.Label(), second.Keys, second.Enabled, second.Order)
	}
}
