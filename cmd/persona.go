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

func runPersona(io IO, args []string) error {
	fs := newFlags(io, "persona")
	out := fs.String("out", "", "import: the persona `folder` to write (default ./<character name>); export: the card file (default ./<persona name>.png)")
	force := fs.Bool("force", false, "replace the folder or file --out names when it exists")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || pos[0] != "import" && pos[0] != "export" {
		return &usageError{msg: "try: cyan persona import card.png [--out DIR], or cyan persona export DIR [--out card.png]"}
	}
	if pos[0] == "import" {
		return personaImport(io, pos[1], *out, *force)
	}
	return personaExport(io, pos[1], *out, *force)
}

func personaImport(io IO, file, out string, force bool) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("%w (check the path)", err)
	}
	c, err := card.Read(data)
	if err != nil {
		if strings.EqualFold(filepath.Ext(file), ".png") && !card.IsPNG(data) {
			return fmt.Errorf("%s is not a PNG image (its first bytes are not a PNG's): is it a card at all?", file)
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	f, err := card.ToFolder(c)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
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
	w := io.Stdout
	fmt.Fprintf(w, "imported %q (%s) into %s\n", f.Name, c.Version(), abs)
	greetings := len(c.AlternateGreetings)
	if strings.TrimSpace(c.FirstMes) != "" {
		greetings++
	}
	fmt.Fprintf(w, "  %-14s the character's texts in the root prompt; %d greeting(s), %d for groups\n", persona.FileName, greetings, len(c.GroupOnlyGreetings))
	if ex, ok := f.Files[card.ExamplesFile]; ok {
		fmt.Fprintf(w, "  %-14s %d example conversation(s)\n", card.ExamplesFile, max(1, strings.Count(string(ex), "<START>")))
	}
	if c.CharacterBook != nil {
		if b, err := lorebook.Parse(c.CharacterBook); err == nil {
			fmt.Fprintf(w, "  %-14s %d lorebook entries\n", card.LorebookFile, len(b.Entries))
		}
	}
	if _, ok := f.Files[card.AvatarFile]; ok {
		fmt.Fprintf(w, "  %-14s the card's picture\n", card.AvatarFile)
	}
	if len(c.Embedded) > 0 {
		fmt.Fprintf(w, "  %-14s %d embedded asset(s)\n", card.AssetsDir+"/", len(c.Embedded))
	}
	fmt.Fprintf(w, "  %-14s the card's other fields, for export\n", card.MetaFile)
	for _, n := range f.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	where := "your config file ($CYAN_CONFIG, or cyan.yaml in the data folder)"
	if cfg, err := loadConfig(io); err == nil {
		if cfg.File != "" {
			where = cfg.File
		} else {
			where = filepath.Join(cfg.DataDir, "cyan.yaml")
		}
	}
	fmt.Fprintf(w, "To talk with %s, put this line in %s and restart cyan serve:\n  persona: %s\n", f.Name, where, abs)
	return nil
}

func personaExport(io IO, dir, out string, force bool) error {
	c, err := card.FromFolder(dir, time.Now())
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
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
	fmt.Fprintf(io.Stdout, "wrote %s: %q as a Character Card V3 (ccv3) with a V2 copy (chara) for older readers; %d lorebook entries\n", out, c.Name, entries)
	for _, n := range c.Notes {
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
