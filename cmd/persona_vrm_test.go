package cmd

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/config"
)

// vrmFile is a glTF binary holding only a VRMC_vrm extension: enough for
// what cyan reads of a model (the page's test draws a whole one).
func vrmFile(js string) []byte {
	for len(js)%4 != 0 {
		js += " "
	}
	b := make([]byte, 20)
	binary.LittleEndian.PutUint32(b, 0x46546C67)
	binary.LittleEndian.PutUint32(b[4:], 2)
	binary.LittleEndian.PutUint32(b[8:], uint32(20+len(js)))
	binary.LittleEndian.PutUint32(b[12:], uint32(len(js)))
	binary.LittleEndian.PutUint32(b[16:], 0x4E4F534A)
	return append(b, js...)
}

// TestPersonaImportAvatar: --avatar puts a VRM beside the card as
// avatar.vrm and says what it is; a file that is not a VRM is refused and
// nothing is written; doctor names the avatar in use, and a broken
// avatar.vrm fails its check with what to do.
func TestPersonaImportAvatar(t *testing.T) {
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
	t.Chdir(dir)
	os.WriteFile("kiri.json", []byte(`{"name": "Kiri", "description": "{{char}} likes {{user}}.", "first_mes": "Hi!", "mes_example": ""}`), 0o600)
	model := vrmFile(`{"asset":{"version":"2.0"},"extensions":{"VRMC_vrm":{"specVersion":"1.0","meta":{"name":"Kiri 3D"},"expressions":{"preset":{"happy":{},"aa":{}}}}}}`)
	os.WriteFile("kiri.vrm", model, 0o600)
	os.WriteFile("kiri.png.vrm", []byte("\x89PNG\r\n\x1a\nnot a model at all"), 0o600)

	if code, _, errs := run("persona", "import", "kiri.json", "--avatar", "kiri.png.vrm"); code != 2 || !strings.Contains(errs, `does not start with "glTF"`) {
		t.Errorf("a PNG as --avatar: %d %s", code, errs)
	}
	if _, err := os.Stat("Kiri"); err == nil {
		t.Error("a refused import wrote the folder")
	}
	code, out, errs := run("persona", "import", "kiri.json", "--avatar", "kiri.vrm")
	if code != 0 || !strings.Contains(out, `avatar.vrm     VRM 1.0 "Kiri 3D", 2 expressions`) {
		t.Fatalf("import --avatar: %d\n%s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join("Kiri", "avatar.vrm")); !bytes.Equal(b, model) {
		t.Error("avatar.vrm is not the model")
	}
	c := checkPersona(&config.Config{Persona: filepath.Join(dir, "Kiri")})
	if !c.ok || !strings.Contains(c.msg, `avatar: avatar.vrm (VRM 1.0 "Kiri 3D", 2 expressions, 1 KB)`) {
		t.Errorf("doctor: %+v", c)
	}
	os.WriteFile(filepath.Join("Kiri", "avatar.vrm"), []byte("glTF cut"), 0o600)
	if c := checkPersona(&config.Config{Persona: filepath.Join(dir, "Kiri")}); c.ok || !strings.Contains(c.fix, "remove it") {
		t.Errorf("doctor with a broken avatar.vrm: %+v", c)
	}
	os.WriteFile(filepath.Join("Kiri", "avatar-expressions.json"), []byte(`{"happy": {"happy": 3}}`), 0o600)
	if c := checkPersona(&config.Config{Persona: filepath.Join(dir, "Kiri")}); c.ok || !strings.Contains(c.msg, "avatar-expressions.json: happy: happy: the weight 3") {
		t.Errorf("doctor with a bad vrm_expressions: %+v", c)
	}
	if c := checkPersona(&config.Config{}); !c.ok || !strings.Contains(c.msg, "avatar: the drawn face") {
		t.Errorf("doctor, built-in persona: %+v", c)
	}
	if code, _, errs := run("persona", "import", "--avatar", "kiri.vrm"); code != 2 || !strings.Contains(errs, "goes with a card") {
		t.Errorf("--avatar alone: %d %s", code, errs)
	}
}
