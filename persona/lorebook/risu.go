package lorebook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// RisuAI exports a lorebook (the export button of its lorebook panel,
// exportLoreBook in kwaroran/RisuAI src/ts/process/lorebook.svelte.ts) as
// {"type": "risu", "ver": 1, "data": [loreBook…]}, each entry in RisuAI's
// own shape (the loreBook interface of src/ts/storage/database.svelte.ts):
// key and secondkey are comma-separated texts, insertorder the order,
// alwaysActive the constant flag, extentions (RisuAI's spelling) holds
// risu_case_sensitive.

// isRisu reports whether data is RisuAI's lorebook export.
func isRisu(data []byte) bool {
	var top struct {
		Type json.RawMessage `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	d := bytes.TrimSpace(top.Data)
	return string(bytes.TrimSpace(top.Type)) == `"risu"` && len(d) > 0 && d[0] == '['
}

// risuFields are the RisuAI entry fields fromRisu carries; any other is
// named in a note.
var risuFields = map[string]bool{"key": true, "secondkey": true, "insertorder": true, "comment": true,
	"content": true, "mode": true, "alwaysActive": true, "selective": true, "extentions": true,
	"activationPercent": true, "loreCache": true, "useRegex": true, "bookVersion": true, "id": true, "folder": true}

// fromRisu turns RisuAI's lorebook export into a character_book, entry for
// entry as RisuAI itself writes its lorebook into a card it exports
// (exportCharacterCard in src/ts/characterCards.ts): keys split at commas
// and trimmed, secondary keys only when selective, the entry's comment as
// its name and comment, extentions (with risu_activationPercent and
// risu_loreCache) as its extensions, mode and folder kept.
func fromRisu(data []byte, name string) (json.RawMessage, []string, error) {
	var top map[string]json.RawMessage
	if err := strictObject(data, &top); err != nil {
		return nil, nil, fmt.Errorf("risuai lorebook: %w", err)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(top["data"], &entries); err != nil {
		return nil, nil, fmt.Errorf("risuai lorebook: data: want a list of entries: %w", err)
	}
	if len(entries) > MaxEntries {
		return nil, nil, fmt.Errorf("risuai lorebook: %d entries; the limit is %d", len(entries), MaxEntries)
	}
	dropped := map[string]bool{}
	list := make([]map[string]any, 0, len(entries))
	for i, raw := range entries {
		var src map[string]json.RawMessage
		if err := strictObject(raw, &src); err != nil {
			return nil, nil, fmt.Errorf("risuai lorebook: entry %d: %w", i, err)
		}
		text := func(f string) (string, error) {
			s, err := optText(src[f])
			if err != nil {
				return "", fmt.Errorf("risuai lorebook: entry %d: %s: %w", i, f, err)
			}
			return s, nil
		}
		key, err := text("key")
		if err != nil {
			return nil, nil, err
		}
		second, err := text("secondkey")
		if err != nil {
			return nil, nil, err
		}
		comment, err := text("comment")
		if err != nil {
			return nil, nil, err
		}
		selective, err := optBool(src["selective"], false)
		if err != nil {
			return nil, nil, fmt.Errorf("risuai lorebook: entry %d: selective: %w", i, err)
		}
		always, err := optBool(src["alwaysActive"], false)
		if err != nil {
			return nil, nil, fmt.Errorf("risuai lorebook: entry %d: alwaysActive: %w", i, err)
		}
		ext := map[string]any{}
		if v, ok := src["extentions"]; ok && !isNull(v) {
			if err := json.Unmarshal(v, &ext); err != nil || ext == nil {
				return nil, nil, fmt.Errorf("risuai lorebook: entry %d: extentions: want an object, got %s", i, JSONKind(v))
			}
		}
		caseSensitive, _ := ext["risu_case_sensitive"].(bool)
		for f, to := range map[string]string{"activationPercent": "risu_activationPercent", "loreCache": "risu_loreCache"} {
			if v, ok := src[f]; ok && !isNull(v) {
				ext[to] = v
			}
		}
		out := map[string]any{
			"keys":            splitKeys(key),
			"content":         src["content"],
			"extensions":      ext,
			"enabled":         true,
			"insertion_order": src["insertorder"],
			"constant":        always,
			"selective":       selective,
			"name":            comment,
			"comment":         comment,
			"case_sensitive":  caseSensitive,
			"use_regex":       src["useRegex"],
		}
		if selective {
			out["secondary_keys"] = splitKeys(second)
		}
		for _, f := range []string{"mode", "folder", "id"} {
			if v, ok := src[f]; ok && !isNull(v) {
				out[f] = v
			}
		}
		for k, v := range out {
			if r, ok := v.(json.RawMessage); ok && (len(r) == 0 || isNull(r)) {
				delete(out, k)
			}
		}
		for f := range src {
			if !risuFields[f] {
				dropped[f] = true
			}
		}
		list = append(list, out)
	}
	book := map[string]any{"entries": list}
	if name != "" {
		book["name"] = name
	}
	out, err := json.Marshal(book)
	if err != nil {
		return nil, nil, fmt.Errorf("risuai lorebook: %w", err)
	}
	var notes []string
	for _, f := range slices.Sorted(func(yield func(string) bool) {
		for f := range dropped {
			if !yield(f) {
				return
			}
		}
	}) {
		notes = append(notes, fmt.Sprintf("risuai lorebook: the entries' field %q is not one cyan knows; it was left out", f))
	}
	return out, notes, nil
}

// splitKeys splits RisuAI's comma-separated keys, trimmed, empty ones left
// out.
func splitKeys(s string) []string {
	out := []string{}
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}
