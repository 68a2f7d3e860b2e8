package lorebook

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// risum encodes a module's JSON as RisuAI writes a .risum (see
// ReadRisuModule), with the assets given.
func risum(module string, assets ...string) []byte {
	var enc [256]byte
	for i, b := range rpackDecode {
		enc[b] = byte(i)
	}
	main := []byte(module)
	for i, b := range main {
		main[i] = enc[b]
	}
	out := binary.LittleEndian.AppendUint32([]byte{111, 0}, uint32(len(main)))
	out = append(out, main...)
	for _, a := range assets {
		out = binary.LittleEndian.AppendUint32(append(out, 1), uint32(len(a)))
		out = append(out, a...)
	}
	return append(out, 0)
}

// FuzzReadRisuModule: a module file never panics the reader, and the
// lorebook it gives is a character_book that Parse reads.
func FuzzReadRisuModule(f *testing.F) {
	for _, name := range []string{"risu-persona-maker-ko.risum", "risu-choice-module-ko.risum"} {
		if real, err := os.ReadFile("../card/testdata/wild/" + name); err == nil {
			f.Add(real)
		}
	}
	f.Add(risum(`{"type":"risuModule","module":{"name":"m","lorebook":[{"key":"a, b","content":"x","alwaysActive":false}],"regex":[{"comment":"r","type":"editoutput"}],"trigger":[{}]}}`, "asset"))
	f.Add(risum(`{"type":"risuModule","module":{"lorebook":[{"key":5}],"lua":"x","backgroundEmbedding":7}}`))
	f.Add(risum(`{"type":"other"}`))
	f.Add([]byte{111, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadRisuModule(data)
		if err != nil || m.Lorebook == nil {
			return
		}
		if !json.Valid(m.Lorebook) {
			t.Fatalf("not JSON: %s", m.Lorebook)
		}
		_, _ = Parse(m.Lorebook)
	})
}

// TestReadRisuModule: a module's lorebook, its scripts by name (a disabled
// one not), its assets counted; a module without a lorebook is an empty
// book with a note; a file that is not one is an error that says so.
func TestReadRisuModule(t *testing.T) {
	m, err := ReadRisuModule(risum(`{"type":"risuModule","module":{"name":"M","description":"d","lorebook":[{"key":"a, b","content":"x"}],
		"regex":[{"comment":"r1","type":"editoutput"},{"comment":"off","type":"disabled"}],"trigger":[{"comment":""}]}}`, "p1", "p2"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(m.Lorebook)
	if err != nil || b.Name != "M" || b.Description != "d" || len(b.Entries) != 1 || len(b.Entries[0].Keys) != 2 {
		t.Fatalf("%+v %v", b, err)
	}
	want := []string{`RisuAI regex script "r1"`, `RisuAI trigger script "#1"`, "the module's 2 asset(s) were left out"}
	if len(m.Notes) != len(want) {
		t.Fatalf("notes %q", m.Notes)
	}
	for i, w := range want {
		if !strings.Contains(m.Notes[i], w) {
			t.Errorf("note %d %q, want %q", i, m.Notes[i], w)
		}
	}
	book, notes, err := FromWorldInfo(risum(`{"type":"risuModule","module":{"name":"Empty","regex":[]}}`), "f")
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], `"Empty" has no lorebook entries`) {
		t.Fatalf("%s %q %v", book, notes, err)
	}
	if _, err := Parse(book); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRisuModule(risum(`{"type":"preset"}`)); err == nil || !strings.Contains(err.Error(), "export the module again") {
		t.Errorf("not a module: %v", err)
	}
}
