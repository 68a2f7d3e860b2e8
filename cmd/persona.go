package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/card"
	"github.com/cyan-agent/cyan/persona/lorebook"
	"github.com/cyan-agent/cyan/turn"
)

func personaImport(f *flags) run {
	out := f.String("out", "", "the persona `folder` to write (default ./<character name>); with --lorebook alone, the persona folder the lorebook goes into")
	force := f.Bool("force", false, "replace the folder --out names when it exists (with --lorebook alone: replace its lorebook)")
	book := f.String("lorebook", "", "a SillyTavern World Info `file` (or lorebook): with a card, added to the card's lorebook; alone, made the lorebook of the persona folder --out names")
	avatar := f.String("avatar", "", "a VRM model `file` (.vrm, VRM 0.x or 1.0) beside the card: the folder's avatar.vrm, the body the page shows")
	asJSON := f.json()
	return func(io IO, args []string) error {
		switch {
		case len(args) == 0 && *avatar != "":
			return &usageError{msg: "--avatar goes with a card: cyan persona import CARD --avatar model.vrm (or copy the model into the persona folder as avatar.vrm)"}
		case len(args) == 0 && *book == "":
			return &usageError{msg: "missing arguments: it takes a card FILE, or --lorebook FILE --out DIR; e.g. cyan persona import Seraphina.png"}
		case len(args) == 0:
			return importLorebook(io, *book, *out, *force, *asJSON)
		}
		if data, err := os.ReadFile(args[0]); err == nil && *book == "" && !card.IsPNG(data) && !card.IsZip(data) && lorebook.IsWorldInfo(data) {
			fmt.Fprintf(io.Stderr, "%s is a lorebook (World Info, a RisuAI lorebook or module), not a character: importing it as a lorebook\n", args[0])
			return importLorebook(io, args[0], *out, *force, *asJSON)
		}
		return importCard(io, args[0], *book, *avatar, *out, *force, *asJSON)
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
	VRM            string   `json:"vrm,omitempty"`
	Assets         int      `json:"assets"`
	Notes          []string `json:"notes"`
	ConfigFile     string   `json:"config_file"`
	ConfigLine     string   `json:"config_line"`
}

func importCard(io IO, file, bookFile, vrmFile, out string, force, asJSON bool) error {
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
	if bookFile != "" {
		world, notes, err := readWorld(bookFile)
		if err != nil {
			return err
		}
		merged, err := lorebook.Merge(c.CharacterBook, world)
		if err != nil {
			return badInput("%s: %w", bookFile, err)
		}
		c.CharacterBook = merged
		c.Notes = append(c.Notes, notes...)
		delete(c.Extensions, "world") // the linked world came with it
	}
	f, err := card.ToFolder(c)
	if err != nil {
		return badInput("%s: %w", file, err)
	}
	model, err := addVRM(f, vrmFile)
	if err != nil {
		return err
	}
	if c.CharacterBook != nil {
		if b, err := lorebook.Parse(c.CharacterBook); err == nil {
			f.Notes = append(f.Notes, roomNotes(io, b)...)
		}
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
		Greetings: len(c.AlternateGreetings), Assets: len(c.Embedded), Notes: f.Notes, ConfigLine: "persona: " + abs, VRM: model}
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
	face := card.AvatarFile
	for name := range f.Files {
		if strings.HasPrefix(name, "avatar/neutral.") {
			face, r.Avatar = name, true
		}
	}
	r.ConfigFile = "your config file ($CYAN_CONFIG, or cyan.yaml in the data folder)"
	if file, _, err := configTarget(io); err == nil {
		r.ConfigFile = file
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
		fmt.Fprintf(w, "  %-14s the card's picture: the neutral face\n", face)
	}
	if r.VRM != "" {
		fmt.Fprintf(w, "  %-14s %s: the body the page shows\n", "avatar.vrm", r.VRM)
	}
	if n := faces(f.Files); n > 0 {
		fmt.Fprintf(w, "  %-14s %d more face(s), one per emotion\n", "avatar/", n)
	}
	if r.Assets > 0 {
		fmt.Fprintf(w, "  %-14s %d embedded asset(s)\n", card.AssetsDir+"/", r.Assets)
	}
	fmt.Fprintf(w, "  %-14s the card's other fields, for export\n", card.MetaFile)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", showable(n))
	}
	fmt.Fprintf(w, "To talk with %s, put this line in %s (the config file cyan serve reads) and restart cyan serve:\n  %s\n", r.Name, r.ConfigFile, r.ConfigLine)
	fmt.Fprintf(w, "or run: cyan persona use %s\n", shellQuote(abs))
	fmt.Fprintf(w, "%s gets a conversation of its own (%s), opened with its greeting; the old one stays.\n", r.Name, persona.PageChannelFor(persona.Slug(filepath.Base(abs))))
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

// readWorld reads a SillyTavern World Info file (or a lorebook) as a
// character_book, named after its file when it has no name.
func readWorld(file string) (json.RawMessage, []string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, badInput("%w (check the path)", err)
	}
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	book, notes, err := lorebook.FromWorldInfo(data, name)
	if err != nil {
		return nil, nil, badInput("%s: %w", file, err)
	}
	b, err := lorebook.Parse(book)
	if err != nil {
		return nil, nil, badInput("%s: %w", file, err)
	}
	return book, append(notes, b.Warnings...), nil
}

// roomNotes states what of a book will be left out of the prompt at
// today's model window (modelWindow): the room it gets
// (lorebook.Book.Room under the configuration) against its constant
// entries, which fire every turn and are kept first, named when some do
// not fit.
func roomNotes(io IO, b *lorebook.Book) []string {
	cfg := new(config.Config)
	*cfg = config.Defaults()
	if c, err := loadConfig(io); err == nil {
		cfg = c
	}
	agent := cfg.Agent
	window, source := modelWindow(cfg)
	share := window
	at := fmt.Sprintf("at the model's window of %d tokens (%s)", window, source)
	if window <= 0 {
		share = agent.ContextBudget
		at = fmt.Sprintf("with the model's window not known (%s), so taken as agent.context_budget %d", source, share)
	}
	room := b.Room(agent.Sections.Lorebook, share)
	why, fix := "its token_budget", "raise token_budget in "+card.LorebookFile
	switch {
	case agent.Sections.Lorebook > 0 && room == agent.Sections.Lorebook:
		why, fix = "agent.sections.lorebook", "raise agent.sections.lorebook"
	case b.TokenBudget <= 0:
		why = fmt.Sprintf("%d%% of the window, SillyTavern's default share, as the book sets no token_budget", lorebook.DefaultSharePercent)
		fix = "give the model a larger window (llm.context_window, the server's context length), or set a token_budget in " + card.LorebookFile
	}
	// Only constant entries fire with no conversation: what the scan
	// leaves out of them now it leaves out every turn.
	res := b.Activate(lorebook.Input{Budget: room, Rand: func() float64 { return 0 }})
	var out []string
	need := 0
	for _, f := range res.Matched {
		need += f.Tokens
		if !f.Included && f.Entry.Constant {
			out = append(out, f.Entry.Label())
		}
	}
	if len(res.Matched) == 0 {
		return []string{fmt.Sprintf("the lorebook gets %d tokens of the prompt %s: %s; its entries enter when their keys are mentioned", room, at, why)}
	}
	if len(out) == 0 {
		return []string{fmt.Sprintf("the lorebook gets %d tokens of the prompt %s: %s; its %d constant entries (about %d tokens) all fit", room, at, why, len(res.Matched), need)}
	}
	names := strings.Join(out[:min(len(out), 8)], ", ")
	if len(out) > 8 {
		names += fmt.Sprintf(" and %d more", len(out)-8)
	}
	return []string{fmt.Sprintf("the lorebook gets %d tokens of the prompt %s: %s; its constant entries take about %d, so %d of %d will be left out every turn: %s; to keep them, %s",
		room, at, why, need, len(out), len(res.Matched), names, fix)}
}

// modelWindow is the model's context window as the daemon will see it:
// llm.context_window when set, else what the server says now (Ollama's
// /api/show and /api/ps, vLLM's max_model_len, llama.cpp's n_ctx); 0 and
// why when it cannot be known.
func modelWindow(cfg *config.Config) (int, string) {
	if cfg.LLM.ContextWindow > 0 {
		return cfg.LLM.ContextWindow, "llm.context_window"
	}
	client, err := llm.New(llm.Options{Provider: cfg.LLM.Provider, BaseURL: cfg.LLM.BaseURL, Model: cfg.LLM.Model, APIKey: cfg.LLM.APIKey,
		Timeout: windowProbeTimeout, MaxRetries: -1})
	if err != nil {
		return 0, err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), windowProbeTimeout)
	defer cancel()
	w, err := llm.ProbeWindow(ctx, client, cfg.LLM.Model)
	switch {
	case err != nil:
		return 0, "the LLM server at " + cfg.LLM.BaseURL + " did not answer"
	case w.Tokens <= 0:
		return 0, "the LLM server does not say it"
	}
	return w.Tokens, w.Source
}

// windowProbeTimeout bounds asking the LLM server for its window at import.
const windowProbeTimeout = 3 * time.Second

// importLorebook makes a World Info file (or a lorebook) the lorebook of
// the persona folder dir: lorebook.json (or the file persona.md's lorebook:
// names, replaced only with force), and lorebook: in persona.md's
// front-matter when it had none.
func importLorebook(io IO, file, dir string, force, asJSON bool) error {
	if dir == "" {
		return &usageError{msg: fmt.Sprintf("a lorebook alone goes into a persona folder: give it with --out DIR (or import a card with --lorebook %s)", file)}
	}
	p, err := persona.Load(dir)
	if err != nil {
		return badInput("%s: %w", dir, err)
	}
	book, notes, err := readWorld(file)
	if err != nil {
		return err
	}
	target, addLine := p.LorebookFile, false
	if target == "" {
		target, addLine = card.LorebookFile, true
	}
	path := filepath.Join(dir, filepath.FromSlash(target))
	if _, err := os.Stat(path); err == nil && !force {
		return fmt.Errorf("%s already has a lorebook (%s): replace it with --force", dir, target)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, book, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	mdPath := filepath.Join(dir, persona.FileName)
	md, err := os.ReadFile(mdPath)
	if err != nil {
		return err
	}
	if addLine {
		s := string(md)
		if !strings.HasPrefix(s, "---\n") {
			return badInput("%s has no front-matter to name the lorebook in: add \"lorebook: %s\" to it by hand", mdPath, target)
		}
		s = "---\nlorebook: " + target + "\n" + strings.TrimPrefix(s, "---\n")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(mdPath, []byte(s), 0o644); err != nil {
			return err
		}
	} else if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	if _, err := persona.Load(dir); err != nil {
		if addLine {
			_ = os.WriteFile(mdPath, md, 0o644)
			_ = os.Remove(path)
		}
		return fmt.Errorf("the persona does not load with the lorebook (a bug in cyan; please report it with the file): %w", err)
	}
	b, err := lorebook.Parse(book)
	if err != nil {
		return err
	}
	notes = append(notes, roomNotes(io, b)...)
	if notes == nil {
		notes = []string{}
	}
	if asJSON {
		return printJSON(io.Stdout, map[string]any{"folder": dir, "file": target, "lorebook_entries": len(b.Entries), "notes": notes})
	}
	fmt.Fprintf(io.Stdout, "imported %s as the lorebook of %s: %s, %d entries\n", file, dir, target, len(b.Entries))
	for _, n := range notes {
		fmt.Fprintf(io.Stdout, "note: %s\n", n)
	}
	return nil
}

// faces counts the emotion pictures besides the neutral one.
func faces(files map[string][]byte) int {
	n := 0
	for name := range files {
		if strings.HasPrefix(name, "avatar/") && !strings.HasPrefix(name, "avatar/neutral.") {
			n++
		}
	}
	return n
}

// folderName makes a folder name of a character's name: persona.Slug
// (no spaces, '!' or leading '#'; letters of any script kept).
func folderName(name string) string { return persona.Slug(name) }

// printLore lists, under a packet's section table, the lorebook entries
// that matched this turn: in the prompt or left out, and why.
func printLore(w io.Writer, p *turn.Packet) {
	for _, s := range p.Sections {
		if s.Slot != turn.SlotLoreBefore && s.Slot != turn.SlotLoreAfter {
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
