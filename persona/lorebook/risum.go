package lorebook

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A RisuAI module file (.risum, and module.risum inside a RisuAI CharX) is
// written by exportModule in kwaroran/RisuAI src/ts/process/modules.ts:
// the byte 111, a version byte 0, the length of the main part (uint32,
// little-endian), the main part, then for each of the module's assets a
// byte 1, a length and the asset, and a byte 0 at the end. The main part
// is {"type": "risuModule", "module": {…}} as JSON, encoded with RisuAI's
// RPack (src/ts/rpack), which maps each byte through a fixed table; the
// assets are encoded so too. The module holds a lorebook (RisuAI's own
// entries, as in its lorebook export: see fromRisu), regex scripts and
// trigger scripts.

// rpackDecode is RPack's table: byte b of an encoded file is byte
// rpackDecode[b] of the original. (The same 256 bytes as rpack_map.bin's
// decoding half, which tools that read .risum files without RisuAI ship.)
var rpackDecode = func() (t [256]byte) {
	h, _ := hex.DecodeString("2cf7848bc965fbb69faeb3032d0169741fe4a3ecee5c3421934a0f6ae262029e" +
		"229cfd3cfc71c7c6ad596705706d8a4412fa24865fafd17a47cefe5063dd5106" +
		"6f18e052a8099d56734cb8536cc3a00e19cf3e0d7e07326846ea48f9992eaba4" +
		"49205e5535380cbcd3b1581679280a1ae1f2cdc439dba2ba6072767d95ef7fc8" +
		"c0de3794bfb51481922545ace7f566a72b365ac113e34b3ae88d831b7c27b09a" +
		"42eb87aadc548e7826d25729d4b7f82f8f8975f04177c21effd81511e5049717" +
		"f331d09b00d7cab44f2a3bd9b26bda5da13f3061bd913d4ee6dfbe4d828c1d23" +
		"109864f485337b9043bba988f1d6a51cf6cc6eb95b0b96edd5e9c5cb08a68040")
	copy(t[:], h)
	return t
}()

// IsRisuModule reports whether data starts like a RisuAI module file.
func IsRisuModule(data []byte) bool {
	return len(data) >= 6 && data[0] == 111 && data[1] == 0 &&
		uint64(binary.LittleEndian.Uint32(data[2:6])) <= uint64(len(data)-6)
}

// RisuModule is what cyan reads of a RisuAI module.
type RisuModule struct {
	Name string
	// Lorebook is the module's lorebook as a character_book (entries
	// converted as fromRisu does), nil when it has none.
	Lorebook json.RawMessage
	// Notes say, one line each, what the lorebook leaves out: each regex
	// and trigger script, the assets, the module's HTML and Lua, and what
	// converting the entries left out.
	Notes []string
}

// ReadRisuModule reads a RisuAI module file.
func ReadRisuModule(data []byte) (*RisuModule, error) {
	if len(data) > MaxBookBytes {
		return nil, fmt.Errorf("risuai module: the file is %d bytes; the limit is %d", len(data), MaxBookBytes)
	}
	if !IsRisuModule(data) {
		return nil, errors.New("risuai module: not a RisuAI module file (.risum): export the module again from RisuAI")
	}
	n := int(binary.LittleEndian.Uint32(data[2:6]))
	main := make([]byte, n)
	for i, b := range data[6 : 6+n] {
		main[i] = rpackDecode[b]
	}
	var top struct {
		Type   string                     `json:"type"`
		Module map[string]json.RawMessage `json:"module"`
	}
	if err := json.Unmarshal(main, &top); err != nil || top.Type != "risuModule" || top.Module == nil {
		if err == nil {
			err = fmt.Errorf("its type is %q, not risuModule", top.Type)
		}
		return nil, fmt.Errorf("risuai module: the module's data does not read (%v): export the module again from RisuAI", err)
	}
	m := &RisuModule{}
	m.Name, _ = optText(top.Module["name"])
	if lore := top.Module["lorebook"]; nonEmptyList(lore) {
		book, notes, err := fromRisu(append(append([]byte(`{"type":"risu","data":`), lore...), '}'), m.Name)
		if err != nil {
			return nil, fmt.Errorf("risuai module %q: lorebook: %w", m.Name, err)
		}
		if d, _ := optText(top.Module["description"]); d != "" {
			var b map[string]json.RawMessage
			if json.Unmarshal(book, &b) == nil {
				b["description"], _ = json.Marshal(d)
				book, _ = json.Marshal(b)
			}
		}
		m.Lorebook = book
		m.Notes = append(m.Notes, notes...)
	}
	m.Notes = append(m.Notes, moduleScriptNotes(top.Module["regex"], "RisuAI regex script", "rewrites the chat's text in RisuAI; cyan does not run it")...)
	m.Notes = append(m.Notes, moduleScriptNotes(top.Module["trigger"], "RisuAI trigger script", "runs in RisuAI; cyan does not run it")...)
	for _, f := range []struct{ k, what string }{
		{"lua", "its Lua script"}, {"cjs", "its JavaScript"}, {"backgroundEmbedding", "its background HTML"},
		{"customModuleToggle", "its toggles"},
	} {
		if s, err := optText(top.Module[f.k]); err == nil && strings.TrimSpace(s) != "" {
			m.Notes = append(m.Notes, fmt.Sprintf("the module's %s (%s) is RisuAI's own; cyan leaves it out", f.k, f.what))
		}
	}
	if assets := countAssets(data[6+n:]); assets > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("the module's %d asset(s) were left out: cyan takes a lorebook from a module, not its pictures", assets))
	}
	return m, nil
}

// fromRisuModule is ReadRisuModule for FromWorldInfo: the module's
// lorebook (an empty one when it has none) and the notes.
func fromRisuModule(data []byte, name string) (json.RawMessage, []string, error) {
	m, err := ReadRisuModule(data)
	if err != nil {
		return nil, nil, err
	}
	book := m.Lorebook
	if book == nil {
		n := m.Name
		if n == "" {
			n = name
		}
		book, _ = json.Marshal(map[string]any{"name": n, "entries": []any{}})
		m.Notes = append([]string{fmt.Sprintf("the RisuAI module %q has no lorebook entries", m.Name)}, m.Notes...)
	}
	return book, m.Notes, nil
}

// moduleScriptNotes is one note per enabled script of a module's list, by
// its comment (RisuAI's name for a script).
func moduleScriptNotes(raw json.RawMessage, what, why string) []string {
	var list []map[string]any
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []string
	for i, s := range list {
		if t, _ := s["type"].(string); t == "disabled" {
			continue
		}
		name, _ := s["comment"].(string)
		if strings.TrimSpace(name) == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		out = append(out, fmt.Sprintf("%s %q %s", what, name, why))
	}
	return out
}

// countAssets counts the assets after the main part: each a byte 1, a
// length and the bytes, until a byte 0 or the end.
func countAssets(rest []byte) int {
	n := 0
	for len(rest) >= 5 && rest[0] == 1 {
		l := uint64(binary.LittleEndian.Uint32(rest[1:5]))
		if l > uint64(len(rest)-5) {
			break
		}
		rest = rest[5+l:]
		n++
	}
	return n
}

// nonEmptyList reports a JSON list with something in it.
func nonEmptyList(raw json.RawMessage) bool {
	r := bytes.TrimSpace(raw)
	return len(r) > 2 && r[0] == '['
}
