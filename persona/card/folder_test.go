package card

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/lorebook"
)

var exportTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// importTo reads a card file and writes its persona folder into a new
// folder.
func importTo(t *testing.T, data []byte) (string, *Folder) {
	t.Helper()
	c, err := Read(data)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ToFolder(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "persona")
	if err := f.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	return dir, f
}

func TestImportV2(t *testing.T) {
	dir, f := importTo(t, cardPNG(t, "chara", v2Card))
	p, err := persona.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "Seraphina" || p.Description != "Made for the tests.\nBe kind to her." {
		t.Errorf("name %q description %q", p.Name, p.Description)
	}
	if want := "<START>\nUser: hi\nSeraphina: hello\n<START>\nUser: hi\nHaruhi: hello"; p.Reference != want {
		t.Errorf("reference:\n%s\nwant\n%s", p.Reference, want)
	}
	prompt, err := p.Render(map[string]any{"channel": "home", "user": "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Instructions\nWrite Seraphina's next reply in a fictional chat with alice.",
		"# Seraphina\nSeraphina is a guardian of the Eldoria forest. She looks after alice with care.\n# Appearance\nPink hair, amber eyes.",
		"# Seraphina's personality\nwarm, protective, ${not a variable}",
		"# Scenario\nalice wakes up in Seraphina's glade.",
		// The platform's rules are there, rendered by cyan around the persona.
		"# Notation & Syntax", "`^system [time]: text` is a message from the platform", "`@br` on a line of its own",
		"`<empty_reply>` alone", "# Example conversations\nThe persona reference section right after this prompt holds example conversations", "# Tools", "# System Info",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	own, err := p.Own(map[string]any{"user": "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(own, "# Final instructions\nStay in character as Seraphina.\n") {
		t.Errorf("post_history_instructions should come last in the persona's part:\n…%s", own[max(0, len(own)-200):])
	}
	if strings.Contains(prompt, "{{") || strings.Contains(prompt, "Self-Definition") || strings.Contains(prompt, "Qinglan") || strings.Contains(prompt, "Few-shot") {
		t.Errorf("macros or the built-in's self-definition left in:\n%s", prompt)
	}
	if g, err := p.Greeting("home", false, "alice"); err != nil || g != "*Seraphina smiles at alice.* You are awake!" {
		t.Errorf("greeting %q %v", g, err)
	}
	book, err := lorebook.Parse(p.Lorebook)
	if err != nil || len(book.Entries) != 2 || book.Entries[0].Content != "Eldoria is an ancient forest ruled by {{char}}." {
		t.Fatalf("lorebook: %v %+v", err, book)
	}
	avatar, _ := os.ReadFile(filepath.Join(dir, AvatarFile))
	if !bytes.Equal(avatar, picture(t)) {
		t.Error("avatar.png should be the card's picture")
	}
	meta, _ := os.ReadFile(filepath.Join(dir, MetaFile))
	for _, want := range []string{`"creator": "tester"`, `"character_version": "1.2"`, `"agnai/voice"`, `"x_unknown_v2_field"`, `"fantasy"`} {
		if !bytes.Contains(meta, []byte(want)) {
			t.Errorf("card.json lacks %s:\n%s", want, meta)
		}
	}
	wantNotes := []string{"{{original}} was taken out",
		`extensions.agnai/voice is not an extension cyan knows`, `extensions.risu is not an extension cyan knows`}
	if len(f.Notes) != len(wantNotes) {
		t.Errorf("notes: %q", f.Notes)
	}
	for i, w := range wantNotes {
		if i >= len(f.Notes) || !strings.Contains(f.Notes[i], w) {
			t.Errorf("note %d: %q, want it to say %q", i, f.Notes, w)
		}
	}
}

func TestImportV3(t *testing.T) {
	data := withChunks(picture(t), tEXt("ccv3", b64(v3Card)), tEXt("chara-ext-asset_:emotions/happy.png", b64("pixels")))
	dir, _ := importTo(t, data)
	p, err := persona.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "Alice" { // {{char}} is the nickname (V3)
		t.Errorf("name %q", p.Name)
	}
	if g, _ := p.Greeting("g1", true, "bob"); g != "Hello, everyone!" {
		t.Errorf("group greeting %q", g)
	}
	if _, err := os.Stat(filepath.Join(dir, ExamplesFile)); err == nil {
		t.Error("an empty mes_example should leave no reference")
	}
	prompt, _ := p.Render(nil)
	if strings.Contains(prompt, "# Example conversations") || strings.Contains(prompt, "# Scenario") {
		t.Errorf("sections without content:\n%s", prompt)
	}
	if asset, _ := os.ReadFile(filepath.Join(dir, AssetsDir, "emotions", "happy.png")); string(asset) != "pixels" {
		t.Errorf("asset %q", asset)
	}
	meta, _ := os.ReadFile(filepath.Join(dir, MetaFile))
	for _, want := range []string{`"name": "Alice Liddell"`, `"creation_date": 1700000000`, `"ja": "テストカード"`, `"x_from_v3_1": 42`, `"__asset:emotions/happy.png"`} {
		if !bytes.Contains(meta, []byte(want)) {
			t.Errorf("card.json lacks %s:\n%s", want, meta)
		}
	}
	if bytes.Contains(meta, []byte("modification_date")) {
		t.Error("modification_date is the export's to write")
	}
}

// import → export → import gives the same persona folder, file for file.
func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		data func(t *testing.T) []byte
	}{
		{"V1 JSON", func(*testing.T) []byte { return []byte(v1Card) }},
		{"V2 PNG", func(t *testing.T) []byte { return cardPNG(t, "chara", v2Card) }},
		{"V3 PNG with an asset", func(t *testing.T) []byte {
			return withChunks(picture(t), tEXt("ccv3", b64(v3Card)), tEXt("chara-ext-asset_:emotions/happy.png", b64("pixels")))
		}},
		{"V3 JSON", func(*testing.T) []byte { return []byte(v3Card) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir1, _ := importTo(t, tt.data(t))
			c, err := FromFolder(dir1, exportTime)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "card.png")
			if err := c.WriteFile(out); err != nil {
				t.Fatal(err)
			}
			exported, _ := os.ReadFile(out)
			dir2, _ := importTo(t, exported)
			a, b := files(t, dir1), files(t, dir2)
			if _, ok := a[AvatarFile]; !ok {
				// A JSON card has no picture: the export made one, which
				// the second import keeps.
				if _, err := ReadChunks(b[AvatarFile]); err != nil {
					t.Errorf("the export's picture: %v", err)
				}
				delete(b, AvatarFile)
			}
			if !slices.Equal(slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b))) {
				t.Fatalf("files differ: %v vs %v", slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b)))
			}
			for name := range a {
				if !bytes.Equal(a[name], b[name]) {
					t.Errorf("%s differs:\n--- first import\n%s\n--- after export and import\n%s", name, a[name], b[name])
				}
			}
			p1, _ := persona.Load(dir1)
			p2, _ := persona.Load(dir2)
			r1, _ := p1.Render(map[string]any{"user": "u"})
			r2, _ := p2.Render(map[string]any{"user": "u"})
			if r1 != r2 || p1.Name != p2.Name || p1.Reference != p2.Reference || !bytes.Equal(p1.Lorebook, p2.Lorebook) {
				t.Error("the personas differ")
			}
		})
	}
}

// The export is a V3 card with a V2 copy that SillyTavern reads: its
// reader takes tEXt chunks only, finds the keyword without case, prefers
// ccv3, and base64-decodes the JSON; both copies carry every field their
// spec requires, with the right types.
func TestExportForSillyTavern(t *testing.T) {
	dir, _ := importTo(t, cardPNG(t, "chara", v2Card))
	c, err := FromFolder(dir, exportTime)
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.PNG(nil)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := ReadChunks(data)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	for _, ch := range chunks {
		if ch.Type != "tEXt" {
			continue
		}
		kw, text, _ := strings.Cut(string(ch.Data), "\x00")
		texts[strings.ToLower(kw)] = text
	}
	decode := func(kw string) map[string]any {
		raw, err := base64.StdEncoding.DecodeString(texts[kw])
		if err != nil {
			t.Fatalf("%s: %v", kw, err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v", kw, err)
		}
		return m
	}
	v2, v3 := decode("chara"), decode("ccv3")
	if v2["spec"] != SpecV2 || v2["spec_version"] != "2.0" || v3["spec"] != SpecV3 || v3["spec_version"] != "3.0" {
		t.Fatalf("specs: %v %v / %v %v", v2["spec"], v2["spec_version"], v3["spec"], v3["spec_version"])
	}
	if v2["name"] != "Seraphina" || v2["first_mes"] != "*{{char}} smiles at {{user}}.* You are awake!" {
		t.Errorf("V1 fields at the top of the V2 copy: %v %v", v2["name"], v2["first_mes"])
	}
	strs := []string{"name", "description", "personality", "scenario", "first_mes", "mes_example", "creator_notes",
		"system_prompt", "post_history_instructions", "creator", "character_version"}
	lists := []string{"alternate_greetings", "tags"}
	for _, card := range []map[string]any{v2, v3} {
		d := card["data"].(map[string]any)
		for _, k := range strs {
			if _, ok := d[k].(string); !ok {
				t.Errorf("%s data.%s is %T", card["spec"], k, d[k])
			}
		}
		for _, k := range lists {
			if _, ok := d[k].([]any); !ok {
				t.Errorf("%s data.%s is %T", card["spec"], k, d[k])
			}
		}
		if _, ok := d["extensions"].(map[string]any); !ok {
			t.Errorf("%s extensions is %T", card["spec"], d["extensions"])
		}
		book := d["character_book"].(map[string]any)
		if _, ok := book["extensions"].(map[string]any); !ok {
			t.Errorf("book extensions")
		}
		for _, e := range book["entries"].([]any) {
			e := e.(map[string]any)
			_, k := e["keys"].([]any)
			_, c := e["content"].(string)
			_, x := e["extensions"].(map[string]any)
			_, en := e["enabled"].(bool)
			_, o := e["insertion_order"].(float64)
			if !k || !c || !x || !en || !o {
				t.Errorf("entry lacks a required field: %v", e)
			}
		}
	}
	d3 := v3["data"].(map[string]any)
	if _, ok := d3["group_only_greetings"].([]any); !ok {
		t.Error("V3 requires group_only_greetings")
	}
	if d3["modification_date"] != float64(exportTime.Unix()) {
		t.Errorf("modification_date %v", d3["modification_date"])
	}
	if d2 := v2["data"].(map[string]any); !strings.HasPrefix(d2["creator_notes"].(string), BackfillNote) || d3["creator_notes"] != "Made for the tests.\nBe kind to her." {
		t.Errorf("creator notes: %q / %q", d2["creator_notes"], d3["creator_notes"])
	}
	if d3["system_prompt"] != "Write {{char}}'s next reply in a fictional chat with {{user}}." {
		t.Errorf("system_prompt %q", d3["system_prompt"])
	}
}

// Card text that reads like a heading of the persona.md layout, or holds
// a literal "${", comes back unchanged.
func TestLayoutLikeTextSurvives(t *testing.T) {
	desc := "# {{char}}\nA line.\n# Scenario\n# Tools\n${weird} and \\${escaped} stay.\n#Scenario without a space"
	card := `{"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Mirror", "description": ` + jsonQuote(desc) +
		`, "scenario": "the real scenario", "first_mes": "${x} {{user}}"}}`
	dir, _ := importTo(t, []byte(card))
	c, err := FromFolder(dir, exportTime)
	if err != nil {
		t.Fatal(err)
	}
	if c.Description != desc || c.Scenario != "the real scenario" || c.FirstMes != "${x} {{user}}" {
		t.Errorf("description:\n%q\nwant\n%q\nscenario %q first_mes %q", c.Description, desc, c.Scenario, c.FirstMes)
	}
	p, _ := persona.Load(dir)
	prompt, _ := p.Render(map[string]any{"user": "u"})
	if !strings.Contains(prompt, "# Mirror\n# Mirror\nA line.\n# Scenario\n# Tools\n${weird} and \\${escaped} stay.") {
		t.Errorf("the prompt shows the text as written:\n%s", prompt)
	}
}

// A persona folder written by hand exports too: its prompt becomes the
// description.
func TestExportHandWrittenPersona(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, persona.FileName), []byte("---\nname: Kiri\ncolor: \"#FF8800\"\nvariables: {mood: calm}\n---\nI am ${agent_name}, always ${mood}, talking to ${user}.\n"), 0o644)
	c, err := FromFolder(dir, exportTime)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "Kiri" || c.Description != "I am {{char}}, always calm, talking to {{user}}." || len(c.Notes) != 1 {
		t.Errorf("%+v", c)
	}
	data, err := c.PNG(nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(data)
	if err != nil || back.Name != "Kiri" || back.Spec != SpecV3 {
		t.Fatalf("%v %+v", err, back)
	}
}

func TestWriteRefusesAFullFolder(t *testing.T) {
	c, _ := Decode([]byte(v1Card))
	f, err := ToFolder(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("keep"), 0o644)
	if err := f.Write(dir, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err = %v", err)
	}
	if err := f.Write(dir, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "mine.txt")); err == nil {
		t.Error("--force replaces the folder")
	}
	if _, err := persona.Load(dir); err != nil {
		t.Fatal(err)
	}
}

func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
