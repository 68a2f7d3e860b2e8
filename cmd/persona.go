package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/card"
	"github.com/cyan-agent/cyan/persona/lorebook"
)

func personaImport(f *flags) run {
	out := f.String("out", "", "the persona `folder` to write (default ./<character name>)")
	force := f.Bool("force", false, "replace the folder --out names when it exists")
	asJSON := f.json()
	return func(io IO, args []string) error {
		return importCard(io, args[0], *out, *force, *asJSON)
	}
}

func personaExport(f *flags) run {
	out := f.String("out", "", "the card `file` to write (default ./<persona name>.png)")
	force := f.Bool("force", false, "replace the file --out names when it exists")
	asJSON := f.json()
	return func(io IO, args []string) error {
		return exportCard(io, args[0], *out, *force, *asJSON)
	}
}

// imported is what cyan persona import made, as --json prints it.
type imported struct {
	Name           string   `json:"name"`
	CardVersion    string   `json:"card_version"`
	Folder         string   `json:"folder"`
	Greetings      int      `json:"greetings"`
	GroupGreetings int      `json:"group_greetings"`
	Examples       int      `json:"examples"`
	Lorebook       int      `json:"lorebook_entries"`
	Avatar         bool     `json:"avatar"`
	Assets         int      `json:"assets"`
	Notes          []string `json:"notes"`
	ConfigFile     string   `json:"config_file"`
	ConfigLine     string   `json:"config_line"`
}

func importCard(io IO, file, out string, force, asJSON bool) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return badInput("%w (check the path)", err)
	}
	c, err := card.Read(data)
	if err != nil {
		if strings.EqualFold(filepath.Ext(file), ".png") && !card.IsPNG(data) {
			return badInput("%s is not a PNG image (its first bytes are not a PNG's): is it a card at all?", file)
		}
		return badInput("%s: %w", file, err)
	}
	f, err := card.ToFolder(c)
	if err != nil {
		return badInput("%s: %w", file, err)
	}
	if out == "" {
		out = folderName(f.Name)
	}
	if err := f.Write(out, force); err != nil {
		return err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		abs = out
	}
	r := imported{Name: f.Name, CardVersion: c.Version(), Folder: abs, GroupGreetings: len(c.GroupOnlyGreetings),
		Greetings: len(c.AlternateGreetings), Assets: len(c.Embedded), Notes: f.Notes, ConfigLine: "persona: " + abs}
	if strings.TrimSpace(c.FirstMes) != "" {
		r.Greetings++
	}
	if ex, ok := f.Files[card.ExamplesFile]; ok {
		r.Examples = max(1, strings.Count(string(ex), "<START>"))
	}
	if c.CharacterBook != nil {
		if b, err := lorebook.Parse(c.CharacterBook); err == nil {
			r.Lorebook = len(b.Entries)
		}
	}
	_, r.Avatar = f.Files[card.AvatarFile]
	r.ConfigFile = "your config file ($CYAN_CONFIG, or cyan.yaml in the data folder)"
	if cfg, err := loadConfig(io); err == nil {
		if cfg.File != "" {
			r.ConfigFile = cfg.File
		} else {
			r.ConfigFile = filepath.Join(cfg.DataDir, "cyan.yaml")
		}
	}
	if r.Notes == nil {
		r.Notes = []string{}
	}
	if asJSON {
		return printJSON(io.Stdout, r)
	}
	w := io.Stdout
	fmt.Fprintf(w, "imported %q (%s) into %s\n", r.Name, r.CardVersion, abs)
	fmt.Fprintf(w, "  %-14s the character's texts in the root prompt; %d greeting(s), %d for groups\n", persona.FileName, r.Greetings, r.GroupGreetings)
	if r.Examples > 0 {
		fmt.Fprintf(w, "  %-14s %d example conversation(s)\n", card.ExamplesFile, r.Examples)
	}
	if c.CharacterBook != nil {
		fmt.Fprintf(w, "  %-14s %d lorebook entries\n", card.LorebookFile, r.Lorebook)
	}
	if r.Avatar {
		fmt.Fprintf(w, "  %-14s the card's picture\n", card.AvatarFile)
	}
	if r.Assets > 0 {
		fmt.Fprintf(w, "  %-14s %d embedded asset(s)\n", card.AssetsDir+"/", r.Assets)
	}
	fmt.Fprintf(w, "  %-14s the card's other fields, for export\n", card.MetaFile)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "To talk with %s, put this line in %s and restart cyan serve:\n  %s\n", r.Name, r.ConfigFile, r.ConfigLine)
	return nil
}

func exportCard(io IO, dir, out string, force, asJSON bool) error {
	c, err := card.FromFolder(dir, time.Now())
	if err != nil {
		return badInput("%s: %w", dir, err)
	}
	if out == "" {
		out = folderName(c.Name) + ".png"
	}
	if _, err := os.Stat(out); err == nil && !force {
		return fmt.Errorf("%s already exists: choose another file with --out, or replace it with --force", out)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := c.WriteFile(out); err != nil {
		return err
	}
	entries := 0
	if c.CharacterBook != nil {
		if b, err := lorebook.Parse(c.CharacterBook); err == nil {
			entries = len(b.Entries)
		}
	}
	notes := c.Notes
	if notes == nil {
		notes = []string{}
	}
	if asJSON {
		return printJSON(io.Stdout, map[string]any{"file": out, "name": c.Name, "spec": "chara_card_v3", "lorebook_entries": entries, "notes": notes})
	}
	fmt.Fprintf(io.Stdout, "wrote %s: %q as a Character Card V3 (ccv3) with a V2 copy (chara) for older readers; %d lorebook entries\n", out, c.Name, entries)
	for _, n := range notes {
		fmt.Fprintf(io.Stdout, "note: %s\n", n)
	}
	return nil
}

// folderName makes a file name of a character's name.
func folderName(name string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\' || r == ':' || r == '*' || r == '?' || r == '"' || r == '<' || r == '>' || r == '|':
			return '_'
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, strings.TrimSpace(name))
	s = strings.Trim(s, ". ")
	if s == "" {
		return "persona"
	}
	return s
}

// printLore lists, under a packet's section table, the lorebook entries
// that matched this turn: in the prompt or left out, and why.
func printLore(w io.Writer, p *mainvirtual.Packet) {
	for _, s := range p.Sections {
		if s.Slot != mainvirtual.SlotLoreBefore && s.Slot != mainvirtual.SlotLoreAfter {
			continue
		}
		for _, it := range s.Items {
			state := "in the prompt"
			if !it.Included {
				state = "left out"
			}
			fmt.Fprintf(w, "  lorebook %s: %s (%d tokens): %s\n", it.ID, state, it.Tokens, it.Reason)
		}
	}
}
