package card

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/cyan-agent/cyan/persona/lorebook"
)

// CharX limits: a .charx is a zip, so what it unpacks to is bounded, not
// only the file.
const (
	MaxCharXFiles = 4096     // files in the archive
	MaxCharXBytes = 64 << 20 // all of them unpacked
)

// IsZip reports whether data starts like a zip archive (a .charx), or is a
// JPEG with a zip behind it (RisuAI's "CharX embedded JPEG").
func IsZip(data []byte) bool {
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return true
	}
	return bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}) && bytes.Contains(data, []byte("PK\x05\x06"))
}

// ReadCharX reads a CharX file (Character Card V3 spec, "CHARX"): a zip with
// the card as card.json at its root and its assets beside it, which the
// card's V3 assets name by "embeded://path" URIs (the spec's spelling;
// "embedded://" is read too). The assets become the card's Embedded files
// (their "assets/" prefix taken off) and their URIs "__asset:path", so that
// an export as PNG carries them; the icon named main (or the first icon)
// is the card's picture when it is a PNG. RisuAI's module.risum is read
// for its notes: each regex and trigger script it holds is named, and its
// lorebook is the card's when card.json has none. What the archive holds
// besides — x_meta/ (the assets' PNG metadata), an app's JSON — is left
// out, each with a note.
func ReadCharX(data []byte) (*Card, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("the file is %d bytes; the limit for a card is %d", len(data), MaxFileBytes)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("a .charx file is a zip archive, and this one does not open (%v): export the card again", err)
	}
	if len(zr.File) > MaxCharXFiles {
		return nil, fmt.Errorf("the CharX holds %d files; the limit is %d", len(zr.File), MaxCharXFiles)
	}
	files := map[string][]byte{}
	total := int64(0)
	var left []string
	var module *zip.File
	for _, f := range zr.File {
		name := strings.TrimPrefix(strings.ReplaceAll(f.Name, `\`, "/"), "./")
		if f.FileInfo().IsDir() || name == "" {
			continue
		}
		limit := int64(MaxAssetBytes)
		if name == "card.json" {
			limit = MaxJSONBytes
		}
		if f.UncompressedSize64 > uint64(limit) {
			return nil, fmt.Errorf("%s in the CharX is %d bytes unpacked; the limit is %d", name, f.UncompressedSize64, limit)
		}
		switch {
		case name == "card.json", strings.HasPrefix(name, "assets/"):
		case name == "module.risum":
			module = f
			continue
		case strings.HasPrefix(name, "x_meta/"):
			continue // noted once below
		default:
			left = append(left, fmt.Sprintf("%s in the CharX is not part of the card (an app's own data); it was left out", name))
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s in the CharX: %v", name, err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, limit+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s in the CharX: %v (the archive is damaged)", name, err)
		}
		if int64(len(b)) > limit {
			return nil, fmt.Errorf("%s in the CharX unpacks to more than %d bytes, the limit", name, limit)
		}
		if total += int64(len(b)); total > MaxCharXBytes {
			return nil, fmt.Errorf("the CharX unpacks to more than %d bytes, the limit", MaxCharXBytes)
		}
		files[name] = b
	}
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "x_meta/") {
			left = append(left, "x_meta/ (RisuAI's copy of each asset's PNG metadata) was left out: the assets themselves were kept")
			break
		}
	}
	js, ok := files["card.json"]
	if !ok {
		return nil, errors.New("the CharX has no card.json at its root, so it holds no card: export the card again")
	}
	delete(files, "card.json")
	c, err := Decode(js)
	if err != nil {
		return nil, fmt.Errorf("card.json: %w", err)
	}
	if c.Spec != SpecV3 {
		c.Notes = append(c.Notes, fmt.Sprintf("the CharX's card.json holds a %s card; read as it is", c.Version()))
	}
	if module != nil {
		book, notes := readModule(module)
		if c.CharacterBook == nil && book != nil {
			c.CharacterBook = book
			notes = append([]string{"the lorebook was taken from module.risum (card.json holds none)"}, notes...)
		}
		left = append(left, notes...)
	}
	used := map[string]bool{}
	for i := range c.Assets {
		a := &c.Assets[i]
		p, ok := strings.CutPrefix(a.URI, "embeded://")
		if !ok {
			p, ok = strings.CutPrefix(a.URI, "embedded://")
		}
		if !ok {
			continue
		}
		p = strings.TrimPrefix(p, "/")
		b, found := files[p]
		if !found {
			c.Notes = append(c.Notes, fmt.Sprintf("the asset %q (%s) names %s, which the CharX does not hold", a.Name, a.Type, p))
			continue
		}
		key := strings.TrimPrefix(p, "assets/")
		if c.Embedded == nil {
			c.Embedded = map[string][]byte{}
		}
		c.Embedded[key] = b
		a.URI = "__asset:" + key
		used[p] = true
		if a.Type == "icon" && c.Picture == nil && IsPNG(b) && (a.Name == "main" || !hasMainIcon(c.Assets)) {
			c.Picture = b
		}
	}
	var extra []string
	for p := range files {
		if !used[p] {
			extra = append(extra, p)
		}
	}
	sort.Strings(extra)
	for _, p := range extra {
		if c.Embedded == nil {
			c.Embedded = map[string][]byte{}
		}
		c.Embedded[strings.TrimPrefix(p, "assets/")] = files[p]
		c.Notes = append(c.Notes, fmt.Sprintf("%s is in the CharX but no asset of the card names it: kept in the persona's assets/", path.Clean(p)))
	}
	c.Notes = append(c.Notes, left...)
	return c, nil
}

func hasMainIcon(assets []Asset) bool {
	for _, a := range assets {
		if a.Type == "icon" && a.Name == "main" {
			return true
		}
	}
	return false
}

// readModule reads RisuAI's module.risum in a CharX (RisuAI moves a card's
// regex and trigger scripts there on export, and a copy of its lorebook):
// its lorebook, and a note for each script, as "module.risum: …". A module
// that does not read is one note, not an error.
func readModule(f *zip.File) (json.RawMessage, []string) {
	const lump = "module.risum (RisuAI's module: its regex scripts, trigger scripts and lorebook in RisuAI's own format) was left out"
	if f.UncompressedSize64 > lorebook.MaxBookBytes {
		return nil, []string{fmt.Sprintf("%s: it is %d bytes unpacked, over the limit of %d", lump, f.UncompressedSize64, lorebook.MaxBookBytes)}
	}
	rc, err := f.Open()
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", lump, err)}
	}
	data, err := io.ReadAll(io.LimitReader(rc, lorebook.MaxBookBytes+1))
	rc.Close()
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", lump, err)}
	}
	m, err := lorebook.ReadRisuModule(data)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: it does not read (%v)", lump, err)}
	}
	var notes []string
	for _, n := range m.Notes {
		notes = append(notes, "module.risum: "+n)
	}
	return m.Lorebook, notes
}
