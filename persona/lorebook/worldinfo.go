package lorebook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// A SillyTavern World Info file (what its World Info panel exports, and what
// it keeps in data/<user>/worlds/) is {"entries": {"0": {…}, "1": {…}}}: the
// entries are an object keyed by uid, and each entry names its fields its
// own way (key, keysecondary, order, disable, and the extensions' fields at
// the top). The names are those of newWorldInfoEntryTemplate in
// SillyTavern's public/scripts/world-info.js.

// worldInfoFields maps a World Info entry's field to the character_book
// entry's: top-level ("keys") or in extensions ("extensions.position").
var worldInfoFields = map[string]string{
	"uid":                 "id",
	"key":                 "keys",
	"keysecondary":        "secondary_keys",
	"comment":             "comment",
	"content":             "content",
	"constant":            "constant",
	"selective":           "selective",
	"order":               "insertion_order",
	"caseSensitive":       "case_sensitive",
	"selectiveLogic":      "extensions.selectiveLogic",
	"probability":         "extensions.probability",
	"useProbability":      "extensions.useProbability",
	"position":            "extensions.position",
	"depth":               "extensions.depth",
	"role":                "extensions.role",
	"scanDepth":           "extensions.scan_depth",
	"matchWholeWords":     "extensions.match_whole_words",
	"excludeRecursion":    "extensions.exclude_recursion",
	"preventRecursion":    "extensions.prevent_recursion",
	"delayUntilRecursion": "extensions.delay_until_recursion",
	"group":               "extensions.group",
	"groupOverride":       "extensions.group_override",
	"groupWeight":         "extensions.group_weight",
	"useGroupScoring":     "extensions.use_group_scoring",
	"sticky":              "extensions.sticky",
	"cooldown":            "extensions.cooldown",
	"delay":               "extensions.delay",
	"vectorized":          "extensions.vectorized",
	"automationId":        "extensions.automation_id",
	"outletName":          "extensions.outlet_name",
	"ignoreBudget":        "extensions.ignore_budget",
	"displayIndex":        "extensions.display_index",
}

// worldInfoIgnored are World Info fields that only SillyTavern's editor
// uses: they are dropped without a note.
var worldInfoIgnored = map[string]bool{"addMemo": true, "disable": true, "characterFilter": true,
	"matchPersonaDescription": true, "matchCharacterDescription": true, "matchCharacterPersonality": true,
	"matchCharacterDepthPrompt": true, "matchScenario": true, "matchCreatorNotes": true, "triggers": true,
	"extensions": true}

// IsWorldInfo reports whether data is a lorebook file of another app's
// shape: a SillyTavern World Info file (an object whose entries are an
// object keyed by uid rather than a list) or RisuAI's lorebook export
// ({"type": "risu", "data": […]}, see fromRisu) or a RisuAI module file
// (.risum, see ReadRisuModule: its lorebook is read).
func IsWorldInfo(data []byte) bool {
	if isRisu(data) || IsRisuModule(data) {
		return true
	}
	var top struct {
		Entries json.RawMessage `json:"entries"`
	}
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	e := bytes.TrimSpace(top.Entries)
	return len(e) > 0 && e[0] == '{'
}

// FromWorldInfo turns a SillyTavern World Info file into a character_book
// object (the form a card holds), entries in the order SillyTavern shows
// them (displayIndex, then uid). name is the book's name when the file has
// none (SillyTavern names a world by its file). Fields of SillyTavern's own
// (characterFilter, triggers…) are left out; the notes say which, once each.
// RisuAI's lorebook export is turned into one too (fromRisu), and so is a
// RisuAI module's lorebook (ReadRisuModule), with notes for its scripts. A file that
// is already a character_book or lorebook_v3 is returned as it is.
func FromWorldInfo(data []byte, name string) (json.RawMessage, []string, error) {
	if len(data) > MaxBookBytes {
		return nil, nil, fmt.Errorf("lorebook: the book is %d bytes; the limit is %d", len(data), MaxBookBytes)
	}
	if isRisu(data) {
		return fromRisu(data, name)
	}
	if IsRisuModule(data) {
		return fromRisuModule(data, name)
	}
	if !IsWorldInfo(data) {
		return data, nil, nil
	}
	var top map[string]json.RawMessage
	if err := strictObject(data, &top); err != nil {
		return nil, nil, fmt.Errorf("world info: %w", err)
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(top["entries"], &entries); err != nil {
		return nil, nil, fmt.Errorf("world info: entries: want an object of entries keyed by uid: %w", err)
	}
	if len(entries) > MaxEntries {
		return nil, nil, fmt.Errorf("world info: %d entries; the limit is %d", len(entries), MaxEntries)
	}
	type item struct {
		key   string
		order float64
		uid   float64
		entry map[string]any
	}
	var items []item
	dropped, differs := map[string]bool{}, map[string]bool{}
	for k, raw := range entries {
		var src map[string]json.RawMessage
		if err := strictObject(raw, &src); err != nil {
			return nil, nil, fmt.Errorf("world info: entry %q: %w", k, err)
		}
		out := map[string]any{}
		ext := map[string]any{}
		if raw, ok := src["extensions"]; ok {
			_ = json.Unmarshal(raw, &ext) // an extensions object of its own is kept
			if ext == nil {
				ext = map[string]any{}
			}
		}
		enabled := true
		if v, ok := src["disable"]; ok {
			d, err := optBool(v, false)
			if err != nil {
				return nil, nil, fmt.Errorf("world info: entry %q: disable: %w", k, err)
			}
			enabled = !d
		}
		out["enabled"] = enabled
		for f, v := range src {
			if wi, ok := bookNames[f]; ok {
				// A character_book name beside (or instead of) the World
				// Info one, as Chub writes its lorebooks: the World Info
				// field wins, as in SillyTavern.
				w, there := src[wi]
				there = there && !isNull(w) // null: SillyTavern's default
				switch {
				case f == "enabled" && there:
					if d, err := optBool(w, false); err == nil && d == (string(bytes.TrimSpace(v)) == "true") {
						differs[f+"/"+wi] = true
					}
				case there && wi != "" && !sameJSON(v, w):
					differs[f+"/"+wi] = true
				case !there && !isNull(v):
					out[f] = v
				}
				continue
			}
			to, ok := worldInfoFields[f]
			if !ok {
				if !worldInfoIgnored[f] {
					dropped[f] = true
				}
				continue
			}
			if isNull(v) {
				continue
			}
			if e, ok := strings.CutPrefix(to, "extensions."); ok {
				ext[e] = v
			} else {
				out[to] = v
			}
		}
		if n, ok, _ := optNumber(src["position"]); ok && n == 0 {
			out["position"] = "before_char"
		} else if ok {
			out["position"] = "after_char"
		}
		out["extensions"] = ext
		it := item{key: k, entry: out, uid: math.Inf(1), order: math.Inf(1)}
		if n, ok, _ := optNumber(src["displayIndex"]); ok {
			it.order = n
		}
		if n, ok, _ := optNumber(src["uid"]); ok {
			it.uid = n
		} else if n, err := strconv.ParseFloat(k, 64); err == nil {
			it.uid = n
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b item) int {
		if a.order != b.order {
			return cmpFloat(a.order, b.order)
		}
		if a.uid != b.uid {
			return cmpFloat(a.uid, b.uid)
		}
		return strings.Compare(a.key, b.key)
	})
	book := map[string]any{}
	for _, f := range []string{"name", "description", "scan_depth", "token_budget", "recursive_scanning", "extensions"} {
		if v, ok := top[f]; ok && !isNull(v) {
			book[f] = v
		}
	}
	if _, ok := book["name"]; !ok && name != "" {
		book["name"] = name
	}
	list := make([]map[string]any, 0, len(items))
	for _, it := range items {
		list = append(list, it.entry)
	}
	book["entries"] = list
	out, err := json.Marshal(book)
	if err != nil {
		return nil, nil, fmt.Errorf("world info: %w", err)
	}
	var notes []string
	for _, f := range slices.Sorted(func(yield func(string) bool) {
		for f := range dropped {
			if !yield(f) {
				return
			}
		}
	}) {
		notes = append(notes, fmt.Sprintf("world info: the entries' field %q is not one cyan knows; it was left out", f))
	}
	for _, fw := range slices.Sorted(maps.Keys(differs)) {
		f, wi, _ := strings.Cut(fw, "/")
		notes = append(notes, fmt.Sprintf("world info: an entry's %q differs from its %q; SillyTavern reads %q, and so does cyan", f, wi, wi))
	}
	return out, notes, nil
}

// bookNames are the character_book names of World Info fields, which a
// World Info file may carry too (Chub's lorebook downloads carry both
// forms): with the World Info field there, the other is its copy; without
// it, the other is read. name has no World Info field (comment is another).
var bookNames = map[string]string{"keys": "key", "secondary_keys": "keysecondary", "insertion_order": "order",
	"priority": "order", "enabled": "disable", "case_sensitive": "caseSensitive", "id": "uid", "name": ""}

// sameJSON reports whether two JSON values are equal.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return reflect.DeepEqual(x, y)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Merge adds the entries of book add (a character_book) after those of
// book base (nil: none), as SillyTavern does when a card's linked World
// Info is embedded on export; base's settings (name, scan_depth,
// token_budget…) win, add's fill what base lacks. An entry of add with the
// same keys and content as one of base is the same entry (a card that
// already embeds its world) and is not added twice.
func Merge(base, add json.RawMessage) (json.RawMessage, error) {
	if base == nil {
		return add, nil
	}
	var b, a map[string]json.RawMessage
	if err := strictObject(base, &b); err != nil {
		return nil, fmt.Errorf("the card's lorebook: %w", err)
	}
	if err := strictObject(add, &a); err != nil {
		return nil, fmt.Errorf("lorebook: %w", err)
	}
	var be, ae []json.RawMessage
	if err := json.Unmarshal(b["entries"], &be); err != nil {
		return nil, fmt.Errorf("the card's lorebook: entries: %w", err)
	}
	if err := json.Unmarshal(a["entries"], &ae); err != nil {
		return nil, fmt.Errorf("lorebook: entries: %w", err)
	}
	seen := map[string]bool{}
	for _, e := range be {
		seen[entryKey(e)] = true
	}
	var fresh []json.RawMessage
	for _, e := range ae {
		if k := entryKey(e); !seen[k] {
			seen[k] = true
			fresh = append(fresh, e)
		}
	}
	ae = fresh
	if len(be)+len(ae) > MaxEntries {
		return nil, fmt.Errorf("lorebook: the two books have %d entries together; the limit is %d", len(be)+len(ae), MaxEntries)
	}
	for k, v := range a {
		if _, ok := b[k]; !ok {
			b[k] = v
		}
	}
	all, err := json.Marshal(append(be, ae...))
	if err != nil {
		return nil, err
	}
	b["entries"] = all
	return json.Marshal(b)
}

// entryKey identifies an entry by its keys and content.
func entryKey(raw json.RawMessage) string {
	var e struct {
		Keys    json.RawMessage `json:"keys"`
		Key     json.RawMessage `json:"key"`
		Content string          `json:"content"`
	}
	_ = json.Unmarshal(raw, &e)
	k := e.Keys
	if len(k) == 0 {
		k = e.Key
	}
	keys, _ := optTexts(k)
	for i := range keys {
		keys[i] = strings.TrimSpace(keys[i])
	}
	slices.Sort(keys)
	return strings.Join(keys, "\x00") + "\x01" + strings.TrimSpace(e.Content)
}

// unhonoured says which of SillyTavern's entry features the entry uses that
// cyan does not honour (it keeps the fields, so an export gives them back).
func unhonoured(e *Entry, ext map[string]json.RawMessage) []string {
	if !e.Enabled {
		return nil
	}
	var out []string
	if g, _ := optText(ext["group"]); strings.TrimSpace(g) != "" {
		out = append(out, fmt.Sprintf("%s: inclusion group %q is not honoured (every entry of the group may fire)", e.Label(), g))
	}
	for _, f := range []string{"sticky", "cooldown", "delay"} {
		if n, ok, _ := optNumber(ext[f]); ok && n > 0 {
			out = append(out, fmt.Sprintf("%s: SillyTavern's timed effect %s=%v is not honoured", e.Label(), f, n))
		}
	}
	return out
}
