package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/config"
)

func TestPersonaCommand(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string {
		if k == "CYAN_DATA_DIR" {
			return filepath.Join(dir, "data")
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
	if code, _, errs := run("persona", "rename", "x"); code != 2 || !strings.Contains(errs, "cyan persona import FILE") {
		t.Errorf("bad verb: %d %s", code, errs)
	}

	// doctor checks the lorebook too.
	os.WriteFile(filepath.Join(dir, "Kiri_Blue", "lorebook.json"), []byte(`{"entries": [{"keys": [], "content": "x", "enabled": true}]}`), 0o600)
	md, _ := os.ReadFile(filepath.Join(dir, "Kiri_Blue", "persona.md"))
	os.WriteFile(filepath.Join(dir, "Kiri_Blue", "persona.md"), bytes.Replace(md, []byte("name: Kiri/Blue\n"), []byte("name: Kiri/Blue\nlorebook: lorebook.json\n"), 1), 0o600)
	c := checkPersona(&config.Config{Persona: filepath.Join(dir, "Kiri_Blue")})
	if c.ok || !strings.Contains(c.msg, "lorebook.json: lorebook: entry 0 has no keys") {
		t.Errorf("doctor: %+v", c)
	}
}
