package card

import (
	"archive/zip"
	"bytes"
	"os"
	"strings"
	"testing"
)

// charx builds a CharX of files (name → content), stored or deflated.
func charx(t testing.TB, deflate bool, files ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		m := zip.Store
		if deflate {
			m = zip.Deflate
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: files[i], Method: m})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// FuzzReadCharX: a CharX never panics the reader or the import, and what
// it reads keeps to the limits: asset paths inside the folder, no file
// over its limit.
func FuzzReadCharX(f *testing.F) {
	if real, err := os.ReadFile("testdata/wild/built-risu-seraphina.charx"); err == nil {
		f.Add(real)
	}
	icon := string(picture(f))
	f.Add(charx(f, false, "card.json", v3Card))
	f.Add(charx(f, true, "card.json", strings.Replace(v3Card, `"uri": "__asset:emotions/happy.png"`, `"uri": "embeded://assets/emotion/image/happy.png"`, 1),
		"assets/emotion/image/happy.png", icon, "module.risum", "\x00\x01", "x_meta/happy.json", `{"type":"PNG"}`))
	f.Add(charx(f, false, "card.json", `{"spec":"chara_card_v3","data":{"name":"x","assets":[{"type":"icon","uri":"embeded://../../etc/passwd","name":"main","ext":"png"}]}}`,
		"../../evil.png", icon))
	f.Add(charx(f, false, "card.json", v1Card))
	f.Add(charx(f, false, "other.json", "{}"))
	f.Add(append([]byte{0xff, 0xd8, 0xff, 0xe0}, charx(f, false, "card.json", v3Card)...))
	f.Add([]byte("PK\x03\x04 cut short"))
	if module, err := os.ReadFile("testdata/wild/risu-persona-maker-ko.risum"); err == nil {
		f.Add(charx(f, true, "card.json", `{"spec":"chara_card_v3","data":{"name":"m"}}`, "module.risum", string(module)))
	}
	f.Add(charx(f, false, "card.json", v3Card, "module.risum", "o\x00\x02\x00\x00\x00\x01\x02\x01\x05\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadCharX(data)
		if err != nil {
			return
		}
		for p, b := range c.Embedded {
			if len(b) > MaxAssetBytes {
				t.Fatalf("asset %s is %d bytes", p, len(b))
			}
		}
		fo, err := ToFolder(c)
		if err != nil {
			return
		}
		for name := range fo.Files {
			if strings.HasPrefix(name, "/") || strings.Contains(name, "..") || strings.Contains(name, "\\") {
				t.Fatalf("a file outside the folder: %q", name)
			}
		}
	})
}

// TestCharXFaces: a CharX's main icon is the face whatever picture it is
// (a WebP cannot carry the card, but shows); its emotion assets become the
// other faces by cyan's emotion names; an emotion the table does not know,
// and an asset the archive lacks, are said.
func TestCharXFaces(t *testing.T) {
	webp := "RIFF\x10\x00\x00\x00WEBPVP8 fake"
	card := `{"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Risu", "first_mes": "hi",
	  "assets": [{"type": "icon", "uri": "embeded://assets/icon/image/main.webp", "name": "main", "ext": "webp"},
	             {"type": "emotion", "uri": "embeded://assets/emotion/image/sadness.png", "name": "sadness", "ext": "png"},
	             {"type": "emotion", "uri": "embeded://assets/emotion/image/smug.png", "name": "smug", "ext": "png"},
	             {"type": "emotion", "uri": "embeded://assets/emotion/image/gone.png", "name": "joy", "ext": "png"}]}}`
	pic := string(picture(t))
	c, err := ReadCharX(charx(t, true, "card.json", card, "assets/icon/image/main.webp", webp,
		"assets/emotion/image/sadness.png", pic, "assets/emotion/image/smug.png", pic))
	if err != nil {
		t.Fatal(err)
	}
	if c.Picture != nil {
		t.Error("a WebP became the card's PNG picture")
	}
	f, err := ToFolder(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(f.Files["avatar/neutral.webp"]) != webp || string(f.Files["avatar/sad.png"]) != pic || f.Files["avatar/neutral.png"] != nil {
		var names []string
		for n := range f.Files {
			names = append(names, n)
		}
		t.Errorf("files %v", names)
	}
	notes := strings.Join(f.Notes, "\n")
	for _, w := range []string{`the asset "joy" (emotion) names assets/emotion/image/gone.png, which the CharX does not hold`, `the emotion asset "smug" matches none of cyan's emotions`} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes:\n%s\nwant %q", notes, w)
		}
	}
}

// TestCharXModule: RisuAI's module.risum in a CharX (here a real module,
// testdata/wild/risu-choice-module-ko.risum) is read for its notes, one per
// regex and trigger script, and gives the card its lorebook when card.json
// has none; a module that does not read is one note.
func TestCharXModule(t *testing.T) {
	module, err := os.ReadFile("testdata/wild/risu-choice-module-ko.risum")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadCharX(charx(t, true, "card.json", v3Card, "module.risum", string(module)))
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(c.Notes, "\n")
	for _, w := range []string{
		`module.risum: RisuAI regex script "🗑️ Request: Omit Choice" rewrites the chat's text in RisuAI`,
		`module.risum: RisuAI trigger script "#1" runs in RisuAI`,
		`module.risum: the module's backgroundEmbedding (its background HTML) is RisuAI's own`,
	} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes:\n%s\nwant %q", notes, w)
		}
	}
	if strings.Contains(notes, "taken from module.risum") || !bytes.Contains(c.CharacterBook, []byte("White Rabbit")) {
		t.Errorf("the card's own lorebook, not the module's copy: %s", c.CharacterBook)
	}
	bare, err := ReadCharX(charx(t, true, "card.json", `{"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "x", "first_mes": "hi"}}`, "module.risum", string(module)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(bare.Notes, "\n"), "the lorebook was taken from module.risum (card.json holds none)") || !bytes.Contains(bare.CharacterBook, []byte("ChoiceModule.lb.format")) {
		t.Errorf("a card without a lorebook takes the module's: %.200s, notes %q", bare.CharacterBook, bare.Notes)
	}
	bad, err := ReadCharX(charx(t, false, "card.json", v3Card, "module.risum", "o\x00\x05\x00\x00\x00junk!"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Join(bad.Notes, "\n"); !strings.Contains(n, "module.risum (RisuAI's module") || !strings.Contains(n, "does not read") {
		t.Errorf("notes:\n%s", n)
	}
}
