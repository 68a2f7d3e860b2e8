package cmd

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/persona"
)

var (
	closedOnce sync.Once
	closedAddr string
)

// noDaemonAddr is an address no daemon listens on: a port that was free
// a moment ago, closed again.
func noDaemonAddr(t *testing.T) string {
	closedOnce.Do(func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closedAddr = ln.Addr().String()
		ln.Close()
	})
	return closedAddr
}

// personaRig runs cyan commands with a data folder of their own, in dir,
// against the daemon at addr.
func personaRig(t *testing.T, addr string) (dir string, run func(args ...string) (int, string, string)) {
	dir = t.TempDir()
	env := func(k string) string {
		switch k {
		case "CYAN_DATA_DIR":
			return filepath.Join(dir, "data")
		case "CYAN_ADDR":
			return addr
		}
		return ""
	}
	t.Chdir(dir)
	return dir, func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(args, IO{Stdout: &out, Stderr: &errb, Env: env})
		return code, out.String(), errb.String()
	}
}

// TestPersonaImportFolderIsASlug: the folder an import writes has no
// spaces, '!' or leading '#', and keeps letters of every script.
func TestPersonaImportFolderIsASlug(t *testing.T) {
	for name, want := range map[string]string{
		"#Ayaka! The Maid": "Ayaka_The_Maid",
		"青蓝 小姐!":           "青蓝_小姐",
		"Kiri/Blue":        "Kiri_Blue",
		"..hidden":         "hidden",
		"!!!":              "persona",
		"Zoë-2.0":          "Zoë-2.0",
		"a\u202eb":         "ab",
	} {
		if got := folderName(name); got != want {
			t.Errorf("folderName(%q) = %q, want %q", name, got, want)
		}
	}
	_, run := personaRig(t, noDaemonAddr(t))
	os.WriteFile("card.json", []byte(`{"name": "#Rin! Tohsaka", "description": "x", "first_mes": "Hi.", "mes_example": ""}`), 0o600)
	if code, out, errs := run("persona", "import", "card.json"); code != 0 || !strings.Contains(out, "Rin_Tohsaka") {
		t.Fatalf("import: %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join("Rin_Tohsaka", persona.FileName)); err != nil {
		t.Fatal(err)
	}
}

// TestPersonaImportNamesTheRunningDaemonsConfig: with a daemon running,
// the import names the config file that daemon reads (GET
// /api/v1/persona), not the shell's default.
func TestPersonaImportNamesTheRunningDaemonsConfig(t *testing.T) {
	theirs := filepath.Join(t.TempDir(), "elsewhere", "cyan.yaml")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/persona" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"name": "青蓝", "id": "", "channel": "desktop", "config_file": theirs})
	}))
	defer srv.Close()
	dir, run := personaRig(t, strings.TrimPrefix(srv.URL, "http://"))
	os.WriteFile("card.json", []byte(`{"name": "Kiri", "description": "x", "first_mes": "Hi.", "mes_example": ""}`), 0o600)
	code, out, errs := run("persona", "import", "card.json")
	if code != 0 || !strings.Contains(out, "put this line in "+theirs) || strings.Contains(out, filepath.Join(dir, "data")) {
		t.Fatalf("import with a daemon running: %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "cyan persona use "+filepath.Join(dir, "Kiri")) || !strings.Contains(out, "(desktop:Kiri)") {
		t.Errorf("the import does not say how to switch, and to which conversation:\n%s", out)
	}
	// Without a daemon: the shell's own config file.
	_, run = personaRig(t, noDaemonAddr(t))
	os.WriteFile("card.json", []byte(`{"name": "Kiri", "description": "x", "first_mes": "Hi.", "mes_example": ""}`), 0o600)
	code, out, _ = run("persona", "import", "card.json", "--json")
	var got imported
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || !strings.HasSuffix(got.ConfigFile, filepath.Join("data", "cyan.yaml")) {
		t.Errorf("import without a daemon: %d %s", code, out)
	}
}

// TestPersonaUse: the verb writes the persona: line into the config file,
// replacing the old one and keeping the rest; default removes it; a
// folder's name is found beside the config file; the config still loads;
// a bad folder is refused with what to do; the running daemon's config
// file is the one edited.
func TestPersonaUse(t *testing.T) {
	dir, run := personaRig(t, noDaemonAddr(t))
	os.WriteFile("card.json", []byte(`{"name": "Seraphina", "description": "x", "first_mes": "Hi.", "mes_example": ""}`), 0o600)
	if code, out, errs := run("persona", "import", "card.json"); code != 0 {
		t.Fatalf("import: %d %s%s", code, out, errs)
	}
	cfgFile := filepath.Join(dir, "data", config.FileName)
	os.MkdirAll(filepath.Dir(cfgFile), 0o700)
	os.WriteFile(cfgFile, []byte("addr: 127.0.0.1:7788\npersona: ./old # mine\nagent: {compress: {enabled: false}}"), 0o600)

	code, out, errs := run("persona", "use", "Seraphina")
	want := "addr: 127.0.0.1:7788\npersona: " + filepath.Join(dir, "Seraphina") + "\nagent: {compress: {enabled: false}}"
	if got, _ := os.ReadFile(cfgFile); code != 0 || string(got) != want {
		t.Fatalf("use: %d %s%s\nthe file holds\n%s\nwant\n%s", code, out, errs, got, want)
	}
	if !strings.Contains(out, "Seraphina's own conversation, desktop:Seraphina") || !strings.Contains(out, "Start cyan serve") {
		t.Errorf("use says:\n%s", out)
	}
	cfg, err := config.Load(func(k string) string { return map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data")}[k] })
	if err != nil || cfg.Persona != filepath.Join(dir, "Seraphina") {
		t.Fatalf("the config after use: %v %+v", err, cfg)
	}
	// Found by name beside the config file too, from elsewhere.
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	t.Chdir(filepath.Join(dir, "sub"))
	os.Rename(filepath.Join(dir, "Seraphina"), filepath.Join(dir, "data", "Seraphina"))
	if code, out, errs := run("persona", "use", "Seraphina", "--json"); code != 0 || !strings.Contains(out, `"channel": "desktop:Seraphina"`) {
		t.Errorf("use by a name beside the config: %d %s%s", code, out, errs)
	}
	// Back to the built-in persona: the line goes.
	if code, out, errs := run("persona", "use", "default"); code != 0 || !strings.Contains(out, "conversation, desktop;") {
		t.Fatalf("use default: %d %s%s", code, out, errs)
	}
	if got, _ := os.ReadFile(cfgFile); string(got) != "addr: 127.0.0.1:7788\nagent: {compress: {enabled: false}}" {
		t.Errorf("after use default the file holds\n%s", got)
	}
	os.WriteFile(cfgFile, []byte("persona: x\n"), 0o600)
	if code, out, errs := run("persona", "use", "default"); code != 0 {
		t.Fatalf("use default on a file of the persona line alone: %d %s%s", code, out, errs)
	}
	if got, _ := os.ReadFile(cfgFile); string(got) != "{}\n" {
		t.Errorf("after use default the file holds %q, want an empty mapping", got)
	}
	os.Remove(cfgFile)
	if code, out, errs := run("persona", "use", "default"); code != 0 {
		t.Fatalf("use default without a file: %d %s%s", code, out, errs)
	}
	if _, err := os.Stat(cfgFile); err == nil {
		t.Error("use default wrote a config file where there was none")
	}
	os.WriteFile(cfgFile, []byte("addr: 127.0.0.1:7788\nagent: {compress: {enabled: false}}"), 0o600)
	// A folder that is no persona is refused, the file untouched.
	before, _ := os.ReadFile(cfgFile)
	if code, _, errs := run("persona", "use", "nowhere"); code != 2 || !strings.Contains(errs, `no persona folder "nowhere"`) || !strings.Contains(errs, "default for the built-in") {
		t.Errorf("use nowhere: %d %s", code, errs)
	}
	os.Mkdir(filepath.Join(dir, "broken"), 0o700)
	os.WriteFile(filepath.Join(dir, "broken", persona.FileName), []byte("---\nname: [\n---\nx"), 0o600)
	if code, _, errs := run("persona", "use", filepath.Join(dir, "broken")); code != 2 || !strings.Contains(errs, "persona.md") {
		t.Errorf("use broken: %d %s", code, errs)
	}
	if after, _ := os.ReadFile(cfgFile); !bytes.Equal(before, after) {
		t.Errorf("a refused use changed the file:\n%s", after)
	}
}

// TestPersonaUseEditsTheRunningDaemonsConfig: with a daemon running, its
// config file is edited, and the verb says to restart it.
func TestPersonaUseEditsTheRunningDaemonsConfig(t *testing.T) {
	theirs := filepath.Join(t.TempDir(), "cyan.yaml")
	os.WriteFile(theirs, []byte("log: {level: info}\n"), 0o600)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"name": "青蓝", "id": "", "channel": "desktop", "config_file": theirs})
	}))
	defer srv.Close()
	dir, run := personaRig(t, strings.TrimPrefix(srv.URL, "http://"))
	os.WriteFile("card.json", []byte(`{"name": "Kiri", "description": "x", "first_mes": "Hi.", "mes_example": ""}`), 0o600)
	if code, out, errs := run("persona", "import", "card.json"); code != 0 {
		t.Fatalf("import: %d %s%s", code, out, errs)
	}
	code, out, errs := run("persona", "use", "./Kiri")
	if got, _ := os.ReadFile(theirs); code != 0 || string(got) != "log: {level: info}\npersona: "+filepath.Join(dir, "Kiri")+"\n" {
		t.Fatalf("use: %d %s%s\n%s", code, out, errs, got)
	}
	if !strings.Contains(out, "Restart cyan serve to switch from 青蓝") {
		t.Errorf("use with a daemon running says:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", config.FileName)); err == nil {
		t.Error("the shell's default config was written too")
	}
}

func TestSetPersonaLine(t *testing.T) {
	for _, c := range []struct{ in, line, want string }{
		{"", "persona: /a", "persona: /a\n"},
		{"a: 1", "persona: /a", "a: 1\npersona: /a\n"},
		{"persona: x\na: 1\npersona: y\n", "persona: /a", "persona: /a\na: 1\n"},
		{"a:\n  persona: x\n", "persona: /a", "a:\n  persona: x\npersona: /a\n"},
		{"persona: x\na: 1\n", "", "a: 1\n"},
		{"personas: x\n", "", "personas: x\n"},
	} {
		if got := string(setPersonaLine([]byte(c.in), c.line)); got != c.want {
			t.Errorf("setPersonaLine(%q, %q) = %q, want %q", c.in, c.line, got, c.want)
		}
	}
}

// TestDoctorNamesThePageConversation: doctor's persona line says which
// conversation the page opens with the persona.
func TestDoctorNamesThePageConversation(t *testing.T) {
	if c := checkPersona(&config.Config{}); !c.ok || !strings.HasSuffix(c.msg, "; the page's conversation desktop") {
		t.Errorf("built in: %+v", c)
	}
	dir, run := personaRig(t, noDaemonAddr(t))
	os.WriteFile("card.json", []byte(`{"name": "Kiri", "description": "x", "first_mes": "Hi.", "mes_example": ""}`), 0o600)
	if code, out, errs := run("persona", "import", "card.json"); code != 0 {
		t.Fatalf("import: %d %s%s", code, out, errs)
	}
	if c := checkPersona(&config.Config{Persona: filepath.Join(dir, "Kiri")}); !c.ok || !strings.HasSuffix(c.msg, "; the page's conversation desktop:Kiri") {
		t.Errorf("a folder: %+v", c)
	}
}
