package cmd

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/lorebook"
)

func TestPersonaCommand(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string {
		switch k {
		case "CYAN_DATA_DIR":
			return filepath.Join(dir, "data")
		case "CYAN_ADDR":
			return noDaemonAddr(t)
		}
		return ""
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(args, IO{Stdout: &out, Stderr: &errb, Env: env})
		return code, out.String(), errb.String()
	}
	card := filepath.Join(dir, "kiri.json")
	os.WriteFile(card, []byte(`{"name": "Kiri/Blue", "description": "{{char}} likes {{user}}.", "first_mes": "Hi {{user}}!", "mes_example": ""}`), 0o600)
	t.Chdir(dir)
	code, out, errs := run("persona", "import", card)
	if code != 0 || !strings.Contains(out, `imported "Kiri/Blue" (Character Card V1)`) || !strings.Contains(out, filepath.Join(dir, "data", "cyan.yaml")) {
		t.Fatalf("import: %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "Kiri_Blue", "persona.md")); err != nil {
		t.Fatalf("the default folder is named after the character: %v", err)
	}
	if code, _, errs := run("persona", "import", card); code != 1 || !strings.Contains(errs, "--force") {
		t.Errorf("a second import into the same folder: %d %s", code, errs)
	}
	if code, out, errs := run("persona", "export", "Kiri_Blue"); code != 0 || !strings.Contains(out, "wrote Kiri_Blue.png") {
		t.Fatalf("export: %d %s%s", code, out, errs)
	}
	if code, _, errs := run("persona", "export", "Kiri_Blue"); code != 1 || !strings.Contains(errs, "already exists") {
		t.Errorf("export over a file: %d %s", code, errs)
	}
	if code, _, _ := run("persona", "export", "Kiri_Blue", "--force"); code != 0 {
		t.Errorf("export --force: %d", code)
	}
	if code, _, errs := run("persona", "rename", "x"); code != 2 || !strings.Contains(errs, "cyan persona import [FILE]") {
		t.Errorf("bad verb: %d %s", code, errs)
	}

	// doctor checks the lorebook too.
	os.WriteFile(filepath.Join(dir, "Kiri_Blue", "lorebook.json"), []byte(`{"entries": [{"keys": ["a"], "content": 7, "enabled": true}]}`), 0o600)
	md, _ := os.ReadFile(filepath.Join(dir, "Kiri_Blue", "persona.md"))
	os.WriteFile(filepath.Join(dir, "Kiri_Blue", "persona.md"), bytes.Replace(md, []byte("name: Kiri/Blue\n"), []byte("name: Kiri/Blue\nlorebook: lorebook.json\n"), 1), 0o600)
	c := checkPersona(&config.Config{Persona: filepath.Join(dir, "Kiri_Blue")})
	if c.ok || !strings.Contains(c.msg, "lorebook.json: lorebook: entry 0: content: want text") {
		t.Errorf("doctor: %+v", c)
	}
}

// TestPersonaImportWorldInfo: a SillyTavern World Info file is a lorebook:
// with a card (--lorebook), added to the card's book, an entry the card
// already embeds not twice; alone, detected and put into the persona
// folder --out names; a book whose constant entries do not fit is warned
// about.
func TestPersonaImportWorldInfo(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "CYAN_LLM_BASE_URL": "http://" + noDaemonAddr(t) + "/v1"}
	run := func(args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := Main(args, IO{Stdout: &out, Stderr: &errs, Env: func(k string) string { return env[k] }})
		return code, out.String(), errs.String()
	}
	wild := func(name string) string {
		p, _ := filepath.Abs(filepath.Join("..", "persona", "card", "testdata", "wild", name))
		return p
	}
	sera := filepath.Join(dir, "sera")
	code, out, errs := run("persona", "import", wild("st-seraphina.png"), "--lorebook", wild("st-eldoria.worldinfo.json"), "--out", sera)
	if code != 0 || !strings.Contains(out, "4 lorebook entries") || strings.Contains(out, "World Info \"Eldoria\"") {
		t.Fatalf("card with its world: %d %s%s", code, out, errs)
	}
	// The World Info file alone: detected, and it needs a folder.
	if code, _, errs := run("persona", "import", wild("st-eldoria.worldinfo.json")); code != 2 || !strings.Contains(errs, "is a lorebook (World Info") || !strings.Contains(errs, "--out DIR") {
		t.Fatalf("world info alone without --out: %d %s", code, errs)
	}
	flux := filepath.Join(dir, "flux")
	if code, out, errs := run("persona", "import", wild("stc-flux-the-cat.png"), "--out", flux); code != 0 {
		t.Fatalf("flux: %d %s%s", code, out, errs)
	}
	code, out, errs = run("persona", "import", "--lorebook", wild("st-eldoria.worldinfo.json"), "--out", flux)
	if code != 0 || !strings.Contains(out, "lorebook.json, 4 entries") {
		t.Fatalf("lorebook into a folder: %d %s%s", code, out, errs)
	}
	p, err := persona.Load(flux)
	if err != nil || p.LorebookFile != "lorebook.json" {
		t.Fatalf("the folder after: %v %+v", err, p)
	}
	if b, err := lorebook.Parse(p.Lorebook); err != nil || len(b.Entries) != 4 || b.Name != "st-eldoria.worldinfo" {
		t.Fatalf("its lorebook: %v %+v", err, b)
	}
	if code, _, errs := run("persona", "import", "--lorebook", wild("st-eldoria.worldinfo.json"), "--out", flux); code != 1 || !strings.Contains(errs, "--force") {
		t.Fatalf("again without --force: %d %s", code, errs)
	}
	// A Chinese card whose constant entries alone exceed SillyTavern's share.
	code, out, _ = run("persona", "import", wild("narratium-gaozhen-zh.png"), "--out", filepath.Join(dir, "gz"))
	if code != 0 || !strings.Contains(out, "the lorebook gets 1500 tokens of the prompt with the model's window not known") || !strings.Contains(out, "so 5 of 8 will be left out every turn: entry 4 (状态栏)") {
		t.Fatalf("constant entries over the room: %d %s", code, out)
	}
}

// TestPersonaImportStatesWhatIsLeftOut: the import states, at the model's
// window the LLM server reports now, the lorebook's room and the constant
// entries that will be left out of it every turn — of real cards —
// and a card's own token_budget is its room whatever the window.
func TestPersonaImportStatesWhatIsLeftOut(t *testing.T) {
	wild := func(name string) string {
		p, _ := filepath.Abs(filepath.Join("..", "persona", "card", "testdata", "wild", name))
		return p
	}
	for _, tc := range []struct {
		window int
		args   []string
		want   string
	}{
		{4096, []string{wild("narratium-gaozhen-zh.png")}, "the lorebook gets 1024 tokens of the prompt at the model's window of 4096 tokens (Ollama /api/ps (the loaded model's num_ctx))"},
		{4096, []string{wild("narratium-gaozhen-zh.png")}, "its constant entries take about 6250, so 5 of 8 will be left out every turn: entry 4 (状态栏)"},
		{32768, []string{wild("narratium-gaozhen-zh.png")}, "gets 8192 tokens of the prompt at the model's window of 32768 tokens"},
		{32768, []string{wild("narratium-gaozhen-zh.png")}, "its 8 constant entries (about 6250 tokens) all fit"},
		{4096, []string{wild("narratium-wulin-zh.png")}, "so 10 of 13 will be left out every turn: entry 3 (核心规则 - 经营与成长体系)"},
		{32768, []string{wild("narratium-wulin-zh.png")}, "its 13 constant entries (about 4760 tokens) all fit"},
		// The card's token_budget of 500 is its room at any window.
		{131072, []string{wild("chub-fallout-tree.png")}, "the lorebook gets 500 tokens of the prompt at the model's window of 131072 tokens (Ollama /api/ps (the loaded model's num_ctx)): its token_budget; its constant entries take about 575, so 1 of 1 will be left out every turn: entry 69; to keep them, raise token_budget in lorebook.json"},
	} {
		fake := &llmtest.Server{Flavor: llmtest.Ollama, Window: tc.window, Loaded: true, Models: []string{"qwen3:8b"}}
		srv := httptest.NewServer(fake)
		dir := t.TempDir()
		env := map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "CYAN_LLM_BASE_URL": srv.URL + "/v1", "CYAN_LLM_MODEL": "qwen3:8b"}
		var out, errs bytes.Buffer
		code := Main(append([]string{"persona", "import", "--out", filepath.Join(dir, "p")}, tc.args...), IO{Stdout: &out, Stderr: &errs, Env: func(k string) string { return env[k] }})
		srv.Close()
		if code != 0 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v at %d: %d, want %q in\n%s%s", tc.args, tc.window, code, tc.want, out.String(), errs.String())
		}
	}
}
