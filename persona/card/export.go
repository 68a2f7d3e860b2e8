package card

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/lorebook"
)

// FromFolder makes a card of a persona folder: the reverse of ToFolder.
// The fields come from persona.md's sections (their ${agent_name} and
// ${user} written back as {{char}} and {{user}}), its greeting variables
// and description, the reference, the lorebook, avatar.png (a plain
// picture in the persona's colour when there is none), assets/ and
// card.json. now stamps modification_date. A persona not made by import
// has no card sections: its whole root prompt becomes the description.
func FromFolder(dir string, now time.Time) (*Card, error) {
	p, err := persona.Load(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fsys := root.FS()
	raw, err := fs.ReadFile(fsys, persona.FileName)
	if err != nil {
		return nil, err
	}
	plat, err := builtinPlatform()
	if err != nil {
		return nil, err
	}
	c := &Card{Spec: SpecV3, SpecVersion: "3.0", Name: p.Name, CreatorNotes: p.Description}

	vars := maps.Clone(p.Vars)
	vars["agent_name"], vars["user"] = "{{char}}", "{{user}}"
	render := func(what, src string) (string, error) {
		t, err := persona.Parse(persona.FileName+" ("+what+")", src)
		if err != nil {
			return "", err
		}
		if err := t.ReadFiles(fsys); err != nil {
			return "", err
		}
		out, err := t.Render(vars)
		return strings.TrimSpace(out), err
	}

	_, body := splitFrontMatter(string(raw))
	heads := plat.knownHeads()
	_, secs := splitSections(body, func(l string) bool { return heads[l] })
	fields := map[string]*string{
		headSystem: &c.SystemPrompt, headDescription: &c.Description, headPersonality: &c.Personality,
		headScenario: &c.Scenario, headPostHistory: &c.PostHistoryInstructions,
	}
	found := false
	for _, s := range secs {
		field, ok := fields[s.head]
		if !ok {
			continue
		}
		found = true
		if *field, err = render(strings.TrimPrefix(s.head, "# "), s.text); err != nil {
			return nil, err
		}
	}
	if !found {
		if c.Description, err = render("root prompt", body); err != nil {
			return nil, err
		}
		c.Notes = append(c.Notes, "persona.md has no card sections (it was not made by cyan persona import): its whole root prompt became the description")
	}

	// Greetings.
	for _, g := range []struct {
		name string
		one  *string
		many *[]string
	}{{"first_mes", &c.FirstMes, nil}, {"alternate_greetings", nil, &c.AlternateGreetings}, {"group_only_greetings", nil, &c.GroupOnlyGreetings}} {
		for _, src := range varTexts(p.Vars[g.name]) {
			s, err := render("variables."+g.name, src)
			if err != nil {
				return nil, err
			}
			if g.one != nil {
				*g.one = s
			} else {
				*g.many = append(*g.many, s)
			}
		}
	}
	c.MesExample = mesExample(p.Reference, p.Name)
	if p.Lorebook != nil {
		if _, err := lorebook.Parse(p.Lorebook); err != nil {
			return nil, fmt.Errorf("%s: %w", p.LorebookFile, err)
		}
		book, _, err := lorebook.FromWorldInfo(p.Lorebook, p.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.LorebookFile, err)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, book); err != nil {
			return nil, fmt.Errorf("%s: %w", p.LorebookFile, err)
		}
		c.CharacterBook = b.Bytes()
	}
	if err := c.readMeta(fsys); err != nil {
		return nil, err
	}
	if d := p.DepthPrompt; d != nil && !sameNote(c, d) {
		dp, err := json.Marshal(DepthPrompt{Prompt: fromTemplateText(d.Text), Depth: d.Depth, Role: d.Role})
		if err != nil {
			return nil, err
		}
		if c.Extensions == nil {
			c.Extensions = map[string]json.RawMessage{}
		}
		c.Extensions["depth_prompt"] = dp
	}
	if c.Other == nil {
		c.Other = map[string]json.RawMessage{}
	}
	c.Other["modification_date"] = json.RawMessage(strconv.FormatInt(now.Unix(), 10))

	pic, err := fs.ReadFile(fsys, AvatarFile)
	if errors.Is(err, fs.ErrNotExist) {
		pic, err = fs.ReadFile(fsys, LegacyAvatar)
	}
	if err == nil {
		if _, err := ReadChunks(pic); err != nil {
			return nil, fmt.Errorf("%s: %w (replace it with a PNG picture, or remove it)", AvatarFile, err)
		}
		c.Picture = pic
	} else if errors.Is(err, fs.ErrNotExist) {
		c.Picture = placeholder(p.Color)
	} else {
		return nil, err
	}
	err = fs.WalkDir(fsys, AssetsDir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == AssetsDir {
			return fs.SkipAll
		}
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		if c.Embedded == nil {
			c.Embedded = map[string][]byte{}
		}
		c.Embedded[strings.TrimPrefix(path, AssetsDir+"/")] = data
		return nil
	})
	return c, err
}

// readMeta reads card.json back into the card, when the folder has one.
func (c *Card) readMeta(fsys fs.FS) error {
	raw, err := fs.ReadFile(fsys, MetaFile)
	if errors.Is(err, fs.ErrNotExist) {
		c.Extensions = map[string]json.RawMessage{}
		return nil
	}
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%s: %w", MetaFile, err)
	}
	f := fields{m: m}
	if name := f.text("name", MaxNameBytes); name != "" {
		c.Nickname, c.Name = c.Name, name
	}
	c.Tags = f.texts("tags", MaxTags)
	c.Creator = f.text("creator", MaxTextBytes)
	c.CharacterVersion = f.text("character_version", MaxTextBytes)
	c.Extensions = f.object("extensions")
	c.Assets = f.assets()
	if f.err != nil {
		return fmt.Errorf("%s: %w", MetaFile, f.err)
	}
	if len(m) > 0 {
		c.Other = m
	}
	return nil
}

// mesExample writes the reference back as mes_example: a line that opens
// with the persona's name or userName followed by ":" opens with {{char}}
// or {{user}} again.
func mesExample(ref, name string) string {
	if strings.TrimSpace(ref) == "" {
		return ""
	}
	lines := strings.Split(ref, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, name+":"):
			lines[i] = "{{char}}" + l[len(name):]
		case strings.HasPrefix(l, userName+":"):
			lines[i] = "{{user}}" + l[len(userName):]
		}
	}
	return strings.Join(lines, "\n")
}

func varTexts(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// placeholder is a plain 400×600 picture in the persona's colour (cyan's
// blue when it has none), for a card made of a folder without an avatar.
func placeholder(hex string) []byte {
	col := color.RGBA{0x1D, 0x75, 0xB3, 0xff}
	if h := strings.TrimPrefix(hex, "#"); len(h) == 6 {
		if v, err := strconv.ParseUint(h, 16, 32); err == nil {
			col = color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}
		}
	}
	img := image.NewRGBA(image.Rect(0, 0, 400, 600))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = col.R, col.G, col.B, col.A
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// WriteFile writes the card as a PNG to path.
func (c *Card) WriteFile(path string) error {
	data, err := c.PNG(nil)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// sameNote reports whether persona.md's depth_prompt is the one card.json
// holds, so that the export gives back the card's own JSON for it.
func sameNote(c *Card, d *persona.DepthPrompt) bool {
	old, ok := c.DepthPrompt()
	return ok && depthText(strings.TrimSpace(old.Prompt)) == d.Text && old.Depth == d.Depth && old.Role == d.Role
}
