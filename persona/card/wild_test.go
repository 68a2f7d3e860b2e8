package card

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/lorebook"
)

// TestWildCards imports real public cards (testdata/wild/SOURCES.md says
// where each comes from and under what licence; two were built where no
// public sample was found) and checks what each carries and that the
// import names, one line each, everything it left out — and nothing else.
func TestWildCards(t *testing.T) {
	tests := []struct {
		file, version, name string
		greetings, entries  int
		faces               []string // avatar/ files besides neutral.png
		depth               string   // the Character's Note, when the card has one
		notes               []string // each note, in order
		text                []string // in persona.md
		meta                []string // in card.json (what the card holds besides)
		budget              int      // the lorebook's token_budget, when it has one
	}{
		{file: "st-seraphina.png", version: "Character Card V2", name: "Seraphina", greetings: 1, entries: 4,
			text: []string{"# ${agent_name}\n", "[Seraphina's Personality=", "guardian of this forest"}},
		{file: "stc-coding-sensei.png", version: "Character Card V2", name: "Coding Sensei", greetings: 1},
		{file: "stc-flux-the-cat.png", version: "Character Card V2", name: "Flux the Cat", greetings: 1},
		{file: "stc-capogpt.png", version: "Character Card V2", name: "CapoGPT", greetings: 1},
		{file: "stc-gloria.png", version: "Character Card V2", name: "Gloria, PA", greetings: 2},
		{file: "st-aqua.png", version: "Character Card V2", name: "Aqua", greetings: 1},
		{file: "st-darkness-v1.png", version: "Character Card V1", name: "Darkness", greetings: 1},
		{file: "st-megumin-v1.png", version: "Character Card V1", name: "Megumin", greetings: 1, text: []string{"Arch Wizard of the Crimson Magic Clan"}},
		{file: "narratium-wulin-zh.png", version: "Character Card V3", name: "# 武林外传之同福客栈", greetings: 7, entries: 28,
			notes: []string{`SillyTavern regex script "状态栏美化" rewrites the chat's text`}, text: []string{"同福客栈"}},
		{file: "narratium-wulin-zh.v3.json", version: "Character Card V3", name: "# 武林外传之同福客栈", greetings: 7, entries: 28,
			notes: []string{`SillyTavern regex script "状态栏美化"`}},
		{file: "narratium-gaozhen-zh.png", version: "Character Card V3", name: "高枕", greetings: 9, entries: 11,
			notes: []string{`SillyTavern regex script "高枕状态栏"`, `SillyTavern regex script "高枕开场白"`}},
		{file: "chub-fallout-tree.png", version: "Character Card V3", name: "Fallout Tree", greetings: 1, entries: 69, budget: 500,
			notes: []string{"entry 68 has no keys and is not constant, so it could never fire: it was imported disabled"},
			text:  []string{"built a treehouse refuge"}, meta: []string{`"full_path": "horcocks/fallout-tree-81679d96"`, `"id": 166248`}},
		{file: "built-risu-seraphina.charx", version: "Character Card V3", name: "Seraphina", greetings: 1, entries: 5,
			faces: []string{"angry.png", "happy.png"}, depth: "${agent_name} speaks softly and never leaves the glade.",
			notes: []string{"x_meta/ (RisuAI's copy", "entry 0 (Eldoria) has no keys and is not constant, so it could never fire: it was imported disabled",
				`RisuAI regex script "hide thoughts"`, `RisuAI trigger script "greet"`}},
		{file: "built-chub-flux.json", version: "Character Card V2", name: "Flux the Cat", greetings: 1, entries: 2,
			notes: []string{`SillyTavern regex script "purr"`, "extensions.tavern_helper: Tavern Helper scripts", `extensions.x_unknown_app is not an extension cyan knows`}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "wild", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			c, err := Read(data)
			if err != nil {
				t.Fatal(err)
			}
			if c.Version() != tt.version || c.Name != tt.name {
				t.Errorf("%s %q, want %s %q", c.Version(), c.Name, tt.version, tt.name)
			}
			dir := filepath.Join(t.TempDir(), "p")
			f, err := ToFolder(c)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Write(dir, false); err != nil {
				t.Fatal(err)
			}
			p, err := persona.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(c.AlternateGreetings) + 1; n != tt.greetings || p.Vars["first_mes"] == nil {
				t.Errorf("greetings: %d (first_mes %v), want %d", n, p.Vars["first_mes"] != nil, tt.greetings)
			}
			entries := 0
			if p.Lorebook != nil {
				b, err := lorebook.Parse(p.Lorebook)
				if err != nil {
					t.Fatal(err)
				}
				entries = len(b.Entries)
			}
			if entries != tt.entries {
				t.Errorf("lorebook entries: %d, want %d", entries, tt.entries)
			}
			if tt.budget != 0 {
				if b, _ := lorebook.Parse(p.Lorebook); b == nil || b.TokenBudget != tt.budget {
					t.Errorf("lorebook token_budget: want %d", tt.budget)
				}
			}
			meta, _ := os.ReadFile(filepath.Join(dir, "card.json"))
			for _, w := range tt.meta {
				if !bytes.Contains(meta, []byte(w)) {
					t.Errorf("card.json lacks %s", w)
				}
			}
			// The card's picture is the neutral face; its emotions the others.
			if c.Picture != nil || strings.HasSuffix(tt.file, ".png") {
				pic, err := os.ReadFile(filepath.Join(dir, "avatar", "neutral.png"))
				if err != nil || !IsPNG(pic) {
					t.Errorf("avatar/neutral.png: %v", err)
				}
				if chunks, _ := ReadChunks(pic); chunks != nil {
					for _, ch := range chunks {
						if tx, ok, _ := TextOf(ch); ok && (tx.Keyword == "chara" || tx.Keyword == "ccv3") {
							t.Error("the face still holds the card")
						}
					}
				}
			}
			faces, _ := os.ReadDir(filepath.Join(dir, "avatar"))
			var got []string
			for _, e := range faces {
				if e.Name() != "neutral.png" {
					got = append(got, e.Name())
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.faces, ",") {
				t.Errorf("faces %v, want %v", got, tt.faces)
			}
			switch {
			case tt.depth == "" && p.DepthPrompt != nil:
				t.Errorf("a Character's Note from nowhere: %+v", p.DepthPrompt)
			case tt.depth != "" && (p.DepthPrompt == nil || p.DepthPrompt.Text != tt.depth || p.DepthPrompt.Depth != 4 || p.DepthPrompt.Role != "system"):
				t.Errorf("Character's Note %+v, want %q at 4 as system", p.DepthPrompt, tt.depth)
			}
			if len(f.Notes) != len(tt.notes) {
				t.Errorf("notes:\n%s\nwant %d", strings.Join(f.Notes, "\n"), len(tt.notes))
			}
			for i, w := range tt.notes {
				if i < len(f.Notes) && !strings.Contains(f.Notes[i], w) {
					t.Errorf("note %d %q, want it to say %q", i, f.Notes[i], w)
				}
			}
			md, _ := os.ReadFile(filepath.Join(dir, persona.FileName))
			for _, w := range tt.text {
				if !bytes.Contains(md, []byte(w)) {
					t.Errorf("persona.md lacks %q", w)
				}
			}
			// An export is read back whole.
			back, err := FromFolder(dir, exportTime)
			if err != nil {
				t.Fatal(err)
			}
			out, err := back.PNG(nil)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Read(out)
			if err != nil {
				t.Fatalf("export read back: %v", err)
			}
			// The import writes <USER>, <BOT> as {{user}}, {{char}} (see the doc).
			norm := func(s string) string {
				s = userMacro.ReplaceAllLiteralString(charMacro.ReplaceAllLiteralString(s, "{{char}}"), "{{user}}")
				return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
			}
			if again.Name != c.Name || norm(again.FirstMes) != norm(c.FirstMes) || len(again.AlternateGreetings) != len(c.AlternateGreetings) {
				a, b := norm(again.FirstMes), norm(c.FirstMes)
				i := 0
				for i < len(a) && i < len(b) && a[i] == b[i] {
					i++
				}
				t.Errorf("export read back: %q, first_mes differs at %d: %q vs %q, %d greetings", again.Name, i, trim(a[i:]), trim(b[i:]), len(again.AlternateGreetings))
			}
		})
	}
}

// TestWildWorldInfo: SillyTavern's own World Info file (Seraphina's
// Eldoria) reads as a lorebook with its four entries, keys and order.
func TestWildWorldInfo(t *testing.T) {
	data, err := os.ReadFile("testdata/wild/st-eldoria.worldinfo.json")
	if err != nil {
		t.Fatal(err)
	}
	if !lorebook.IsWorldInfo(data) {
		t.Fatal("not seen as World Info")
	}
	b, err := lorebook.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Entries) != 4 || len(b.Warnings) != 0 {
		t.Fatalf("%d entries, warnings %q", len(b.Entries), b.Warnings)
	}
	r := b.Activate(lorebook.Input{Messages: []string{"User: what are the shadowfangs?"}, Char: "Seraphina", User: "User"})
	if len(r.Before) != 1 || !strings.Contains(r.Before[0].Text, "Shadowfangs are beasts of darkness") || strings.Contains(r.Before[0].Text, "{{char}}") {
		t.Fatalf("fired %+v", r.Before)
	}
}

func trim(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40])
	}
	return s
}

// TestWildRisuLorebook: a lorebook as RisuAI's own export button writes it
// (sircuf/SoleneEditor's fixture, Korean text) reads as a lorebook entry
// for entry: comma-separated keys, the constant world entry, a selective
// entry that needs its secondary key, and the text (quotes, backslash,
// emoji) unchanged.
func TestWildRisuLorebook(t *testing.T) {
	data, err := os.ReadFile("testdata/wild/solene-risu-ko.lorebook.json")
	if err != nil {
		t.Fatal(err)
	}
	if !lorebook.IsWorldInfo(data) {
		t.Fatal("not seen as another app's lorebook")
	}
	b, err := lorebook.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Entries) != 3 || len(b.Warnings) != 0 {
		t.Fatalf("%d entries, warnings %q", len(b.Entries), b.Warnings)
	}
	lib, world, sword := b.Entries[0], b.Entries[1], b.Entries[2]
	if lib.Label() != `entry lore-a (솔렌의 도서관)` || len(lib.Keys) != 2 || lib.Constant || lib.Selective {
		t.Errorf("library: %s, %d keys, constant %v, selective %v", lib.Label(), len(lib.Keys), lib.Constant, lib.Selective)
	}
	if !world.Constant || len(world.Keys) != 0 || !world.Enabled {
		t.Errorf("world: constant %v, %d keys, enabled %v", world.Constant, len(world.Keys), world.Enabled)
	}
	if !sword.Selective || len(sword.Keys) != 2 || len(sword.SecondaryKeys) != 1 || sword.Content != "\"따옴표\"와 \\백슬래시, 이모지 🗡️도 있어요." {
		t.Errorf("sword: selective %v, %d+%d keys, content %q", sword.Selective, len(sword.Keys), len(sword.SecondaryKeys), sword.Content)
	}
	fired := func(msg string) []string {
		r := b.Activate(lorebook.Input{Messages: []string{msg}, Char: "솔렌", User: "나"})
		var out []string
		for _, f := range append(r.Before, r.After...) {
			out = append(out, f.Text)
		}
		return out
	}
	got := fired("나: 도서관에 가 볼까? 검도 보고 싶어")
	// In insertion order: the world (50) before the library (100).
	if len(got) != 2 || got[0] != "비가 자주 내리는 항구 도시예요." || got[1] != "낮은 창문으로 오후의 빛이 들어와요.\n솔렌는 이곳의 사서예요." {
		t.Errorf("library and world, not the sword without its legend: %q", got)
	}
	if got := fired("나: 전설의 검을 찾고 있어"); len(got) != 2 || !strings.Contains(got[1], "🗡️") {
		t.Errorf("sword with its legend, and the world: %q", got)
	}
	// As a card's lorebook, through a persona folder and a card exported
	// from it, the Korean text comes back as it was.
	raw, _, err := lorebook.FromWorldInfo(data, "솔렌")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Read([]byte(`{"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "솔렌", "first_mes": "어서 오세요.", "character_book": ` + string(raw) + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	f, err := ToFolder(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "p")
	if err := f.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	back, err := FromFolder(dir, exportTime)
	if err != nil {
		t.Fatal(err)
	}
	out, err := back.PNG(nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Read(out)
	if err != nil {
		t.Fatal(err)
	}
	ab, err := lorebook.Parse(again.CharacterBook)
	if err != nil {
		t.Fatal(err)
	}
	if again.Name != "솔렌" || len(ab.Entries) != 3 || ab.Entries[2].Content != sword.Content || ab.Entries[0].Label() != lib.Label() {
		t.Errorf("read back %q, %d entries, %q", again.Name, len(ab.Entries), ab.Entries[2].Content)
	}
}

// TestWildChubLorebook: a lorebook as Chub hands it out (World Info's shape
// with the character_book's names of the same fields beside them, and
// extensions.chub) reads as its nine entries, titled by their names, with
// no note about the duplicate names, and fires by its keys.
func TestWildChubLorebook(t *testing.T) {
	data, err := os.ReadFile("testdata/wild/chub-far-domain.worldinfo.json")
	if err != nil {
		t.Fatal(err)
	}
	if !lorebook.IsWorldInfo(data) {
		t.Fatal("not seen as World Info")
	}
	raw, notes, err := lorebook.FromWorldInfo(data, "file name")
	if err != nil || len(notes) != 0 {
		t.Fatalf("notes %q, %v", notes, err)
	}
	if !bytes.Contains(raw, []byte(`"full_path":"lorebooks/Enkob/the-fantasy-world-of-runa-the-far-domain-eeb059639c4d"`)) {
		t.Error("extensions.chub left out")
	}
	b, err := lorebook.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "The Far Domain" || len(b.Entries) != 9 || b.TokenBudget != 512 || b.ScanDepth != 2 || len(b.Warnings) != 0 {
		t.Fatalf("%q: %d entries, budget %d, depth %d, warnings %q", b.Name, len(b.Entries), b.TokenBudget, b.ScanDepth, b.Warnings)
	}
	if l := b.Entries[0].Label(); l != "entry 1 (The Four Peaks)" {
		t.Errorf("first entry %s", l)
	}
	if l := b.Entries[1].Label(); l != "entry 2 (Forest of Aulia)" || len(b.Entries[1].Keys) != 2 {
		t.Errorf("second entry %s, %d keys (its empty key is no key)", l, len(b.Entries[1].Keys))
	}
	r := b.Activate(lorebook.Input{Messages: []string{"User: who guards the peak, Tahlia?"}, Char: "Narrator", User: "User"})
	var fired []string
	for _, f := range append(r.Before, r.After...) {
		fired = append(fired, f.Entry.Label())
	}
	if strings.Join(fired, ", ") != "entry 1 (The Four Peaks), entry 9 (Tahlia)" {
		t.Errorf("fired %q", fired)
	}
}

// TestWildRisuModules: two real RisuAI modules (.risum, Korean; from
// ky00ume/RISUAI-MAKE) read as lorebooks: their entries, the keyless ones
// imported disabled with a warning each, one note per regex and trigger
// script and per piece of RisuAI's own (background HTML, toggles), and the
// keys fire.
func TestWildRisuModules(t *testing.T) {
	tests := []struct {
		file, name       string
		entries, enabled int
		notes            []string
		msg, fires       string
	}{
		{file: "risu-choice-module-ko.risum", name: "⚖️ Choice Module: Capsule Extension 💊 v5.9", entries: 11, enabled: 1,
			notes: []string{`regex script "🗑️ Request: Omit Choice"`, `regex script "🗑️ Request: Fix Dice"`, `regex script "🖥️ Display: Menu"`,
				`regex script "🖨️ Output: Remove Dice"`, `regex script "🖥️ Display: Lazy"`, `trigger script "#1"`,
				"backgroundEmbedding (its background HTML)", "customModuleToggle (its toggles)"},
			msg: "User: 안녕", fires: "entry 0 (⚖️ Choice Module: Capsule Extension 💊)"},
		{file: "risu-persona-maker-ko.risum", name: "! - 0, 페르소나 및 세계관 생성기(v0.3)", entries: 8, enabled: 6,
			notes: []string{`trigger script "#1"`, `trigger script "New Event"`},
			msg:   "User: /persona 만들어 줘", fires: "entry 2 (1-3. 페르소나 생성기(캐릭터 로어북 가능))"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "wild", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !lorebook.IsWorldInfo(data) {
				t.Fatal("not seen as another app's lorebook")
			}
			raw, notes, err := lorebook.FromWorldInfo(data, "file name")
			if err != nil {
				t.Fatal(err)
			}
			if len(notes) != len(tt.notes) {
				t.Errorf("notes:\n%s\nwant %d", strings.Join(notes, "\n"), len(tt.notes))
			}
			for i, w := range tt.notes {
				if i < len(notes) && !strings.Contains(notes[i], w) {
					t.Errorf("note %d %q, want it to say %q", i, notes[i], w)
				}
			}
			b, err := lorebook.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			enabled := 0
			for _, e := range b.Entries {
				if e.Enabled {
					enabled++
				}
			}
			if b.Name != tt.name || len(b.Entries) != tt.entries || enabled != tt.enabled || len(b.Warnings) != tt.entries-tt.enabled {
				t.Errorf("%q: %d entries, %d enabled, warnings:\n%s", b.Name, len(b.Entries), enabled, strings.Join(b.Warnings, "\n"))
			}
			r := b.Activate(lorebook.Input{Messages: []string{tt.msg}, Char: "리스", User: "User"})
			var fired []string
			for _, f := range append(r.Before, r.After...) {
				fired = append(fired, f.Entry.Label())
			}
			if strings.Join(fired, ", ") != tt.fires {
				t.Errorf("fired %q, want %s", fired, tt.fires)
			}
		})
	}
}
