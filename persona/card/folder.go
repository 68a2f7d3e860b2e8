package card

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/lorebook"
)

// The files of a persona folder made from a card.
const (
	ExamplesFile = "examples.txt"       // mes_example, the persona's reference
	LorebookFile = "lorebook.json"      // character_book, as the card held it
	AvatarFile   = "avatar/neutral.png" // the card's picture without the card: the neutral face
	LegacyAvatar = "avatar.png"         // where imports before avatar/ put the picture
	MetaFile     = "card.json"          // the card's fields the persona does not use
	AssetsDir    = "assets"             // PNG-embedded assets, by their path
)

// userName stands for {{user}} in the persona's reference, which is plain
// text (the main prompt has ${user}, the current speaker).
const userName = "User"

// maxPromptFile is what a persona may read into its prompt (persona.md,
// the reference): the persona package's limit.
const maxPromptFile = 1 << 20

// Folder is a persona folder made from a card: its files by path.
type Folder struct {
	Name  string
	Files map[string][]byte
	// Notes say what was changed or left behind.
	Notes []string
}

// ToFolder makes the persona folder of a card: persona.md (the character's
// texts in the root prompt, the greetings in its variables, the creator's
// notes as its description), the reference from mes_example, the lorebook,
// the avatar, the embedded assets and card.json with the rest.
func ToFolder(c *Card) (*Folder, error) {
	plat, err := builtinPlatform()
	if err != nil {
		return nil, fmt.Errorf("card: the built-in persona: %w", err)
	}
	f := &Folder{Files: map[string][]byte{}, Notes: slices.Clone(c.Notes)}
	name := strings.TrimSpace(c.Name)
	if n := strings.TrimSpace(c.Nickname); n != "" {
		name = n
	}
	f.Name = name
	heads := plat.knownHeads()
	text := func(s string) string { return guarded(toTemplate(strings.TrimSpace(s)), heads) }
	system := c.SystemPrompt
	post := c.PostHistoryInstructions
	if originalMacro.MatchString(system + post) {
		system = originalMacro.ReplaceAllString(system, "")
		post = originalMacro.ReplaceAllString(post, "")
		f.Notes = append(f.Notes, "{{original}} was taken out of the card's instructions: cyan's own rules are always in the prompt")
	}

	// The root prompt.
	var body strings.Builder
	writeSec := func(head, s string) {
		if strings.TrimSpace(s) == "" {
			return
		}
		if body.Len() > 0 {
			body.WriteString("\n")
		}
		body.WriteString(head + "\n" + s + "\n")
	}
	for _, s := range plat.before {
		writeSec(s.head, strings.TrimRight(s.text, "\n"))
	}
	writeSec(headSystem, text(system))
	writeSec(headDescription, text(c.Description))
	writeSec(headPersonality, text(c.Personality))
	writeSec(headScenario, text(c.Scenario))
	for _, s := range plat.after {
		if s.head == fewShot {
			// The built-in's few-shot rules are about sample lines that
			// are not its own; a card's examples are the character's.
			if strings.TrimSpace(c.MesExample) != "" {
				writeSec(headExamples, examplesIntro)
			}
			continue
		}
		writeSec(s.head, strings.TrimRight(s.text, "\n"))
	}
	writeSec(headPostHistory, text(post))
	for file, data := range plat.files {
		f.Files[file] = data
	}

	// The front-matter.
	fm := &yaml.Node{Kind: yaml.MappingNode}
	put := func(m *yaml.Node, k string, v any) {
		var n yaml.Node
		if err := n.Encode(v); err != nil {
			panic(err) // strings, lists and numbers always encode
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &n)
	}
	put(fm, "name", name)
	if notes := strings.TrimSpace(c.CreatorNotes); notes != "" {
		put(fm, "description", notes)
	}
	if strings.TrimSpace(c.MesExample) != "" {
		put(fm, "reference", ExamplesFile)
		ex := examplesText(c.MesExample, name)
		if len(ex) > maxPromptFile {
			return nil, fmt.Errorf("mes_example is %d bytes once converted; a persona's reference may hold %d", len(ex), maxPromptFile)
		}
		f.Files[ExamplesFile] = []byte(ex)
	}
	if d, ok := c.DepthPrompt(); ok {
		dp := &yaml.Node{Kind: yaml.MappingNode}
		put(dp, "text", depthText(strings.TrimSpace(d.Prompt)))
		put(dp, "depth", d.Depth)
		put(dp, "role", d.Role)
		put(fm, "depth_prompt", dp)
	}
	if c.CharacterBook != nil {
		put(fm, "lorebook", LorebookFile)
		var b bytes.Buffer
		if err := json.Indent(&b, c.CharacterBook, "", "  "); err != nil {
			return nil, fmt.Errorf("data.character_book: %w", err)
		}
		b.WriteByte('\n')
		if b.Len() > lorebook.MaxBookBytes {
			return nil, fmt.Errorf("the lorebook is %d bytes as a file; the limit is %d", b.Len(), lorebook.MaxBookBytes)
		}
		f.Files[LorebookFile] = b.Bytes()
		if book, err := lorebook.Parse(c.CharacterBook); err == nil {
			f.Notes = append(f.Notes, book.Warnings...)
		}
	}
	vars := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range sortedKeys(plat.vars) {
		put(vars, k, plat.vars[k])
	}
	if s := strings.TrimSpace(c.FirstMes); s != "" {
		put(vars, "first_mes", toTemplate(s))
	}
	for _, g := range []struct {
		name string
		list []string
	}{{"alternate_greetings", c.AlternateGreetings}, {"group_only_greetings", c.GroupOnlyGreetings}} {
		var out []string
		for _, s := range g.list {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, toTemplate(s))
			}
		}
		if len(out) > 0 {
			put(vars, g.name, out)
		}
	}
	put(fm, "variables", vars)
	front, err := yaml.Marshal(fm)
	if err != nil {
		return nil, err
	}
	md := "---\n# Made by cyan persona import. card.json keeps what the card holds besides;\n# cyan persona export makes a card of this folder again.\n" +
		string(front) + "---\n" + body.String()
	if len(md) > maxPromptFile {
		return nil, fmt.Errorf("the card's texts add up to %d bytes, more than a persona.md may hold (%d): shorten the description or the greetings", len(md), maxPromptFile)
	}
	f.Files[persona.FileName] = []byte(md)

	if c.Picture != nil {
		f.Files[AvatarFile] = c.Picture
	}
	for p, data := range c.Embedded {
		clean, err := assetPath(p)
		if err != nil {
			f.Notes = append(f.Notes, fmt.Sprintf("the embedded asset %q was left out: %v", p, err))
			continue
		}
		f.Files[AssetsDir+"/"+clean] = data
	}
	f.Notes = append(f.Notes, c.faces(f.Files)...)
	f.Notes = append(f.Notes, c.extensionNotes()...)
	meta, err := c.meta(name)
	if err != nil {
		return nil, err
	}
	f.Files[MetaFile] = meta
	return f, nil
}

// examplesText is mes_example as the persona's reference: {{char}} and
// {{user}} written out, since the reference is shown as it is.
func examplesText(s, name string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	s = charMacro.ReplaceAllLiteralString(s, name)
	return userMacro.ReplaceAllLiteralString(s, userName) + "\n"
}

// meta is card.json: the card's fields that the persona does not use, so
// that an export gives them back. modification_date is left out: an export
// writes its own.
func (c *Card) meta(personaName string) ([]byte, error) {
	o := object{}
	if personaName != strings.TrimSpace(c.Name) {
		o = append(o, kv{"name", c.Name})
	}
	o = append(o, object{
		{"tags", list(c.Tags)},
		{"creator", c.Creator},
		{"character_version", c.CharacterVersion},
		{"extensions", ext(c.Extensions)},
	}...)
	if c.Assets != nil {
		o = append(o, kv{"assets", c.Assets})
	}
	for _, k := range sortedKeys(c.Other) {
		if k != "modification_date" {
			o = append(o, kv{k, c.Other[k]})
		}
	}
	raw, err := marshal(o)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// assetPath checks the path of an embedded asset: relative, inside the
// folder.
func assetPath(p string) (string, error) {
	c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if p == "" || c == "." || path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") || strings.ContainsAny(c, ":\x00") {
		return "", errors.New("its path leaves the folder")
	}
	return c, nil
}

// Write writes the folder to dir, which must not exist yet or be empty,
// unless replace is set (then the folder is replaced whole). The files are
// written into a new folder beside dir, checked by loading the persona,
// and only then put in dir's place, so a failed import leaves nothing
// behind.
func (f *Folder) Write(dir string, replace bool) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 && !replace {
		return fmt.Errorf("%s already exists and is not empty: choose another folder with --out, or replace it with --force", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, name := range sortedKeys(f.Files) {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Files[name], 0o644); err != nil {
			return err
		}
	}
	if _, err := persona.Load(tmp); err != nil {
		return fmt.Errorf("the persona made from the card does not load (a bug in cyan; please report it with the card): %w", err)
	}
	old := ""
	if _, err := os.Stat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir)
		}
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}
