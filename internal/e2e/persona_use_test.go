package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
)

// TestPersonaUseSwitchesTheConversation: with cyan serve running on a
// config file of its own ($CYAN_CONFIG), cyan persona import (from a shell
// without it) names that file, cyan persona use writes the persona: line
// into it; after a restart the page's conversation is the character's own
// (desktop:Ember), opened with its greeting, while 青蓝's (desktop) is kept;
// cyan persona use default and a restart bring 青蓝's back.
func TestPersonaUseSwitchesTheConversation(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "嗯。"} })
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "conf", "daemon.yaml")
	os.MkdirAll(filepath.Dir(cfgFile), 0o700)
	if err := os.WriteFile(cfgFile, []byte("log: {level: info}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serveEnv := env(dir, url, "CYAN_CONFIG="+cfgFile)
	d := start(t, dir, serveEnv)
	defer func() { d.kill() }()
	if code, out, err := d.post("/api/v1/messages", map[string]string{"channel": "desktop", "user": "me", "text": "你好"}); err != nil || code != 200 {
		t.Fatalf("post: %d %v %v", code, out, err)
	}
	// The shell has no $CYAN_CONFIG: the daemon says which file it reads.
	shell := withoutConfig(d.cliEnv())
	cardFile := filepath.Join(dir, "Ember.png")
	os.WriteFile(cardFile, cardPNG(t, emberCard), 0o600)
	pdir := filepath.Join(dir, "Ember")
	stdout, stderr, rc := cli(t, shell, "", "persona", "import", cardFile, "--out", pdir)
	if rc != 0 || !strings.Contains(stdout, "put this line in "+cfgFile) || !strings.Contains(stdout, "cyan persona use "+pdir) {
		t.Fatalf("import: rc=%d\n%s%s", rc, stdout, stderr)
	}
	stdout, stderr, rc = cli(t, shell, "", "persona", "use", pdir)
	if got, _ := os.ReadFile(cfgFile); rc != 0 || string(got) != "log: {level: info}\npersona: "+pdir+"\n" || !strings.Contains(stdout, "Restart cyan serve") {
		t.Fatalf("use: rc=%d\n%s%s\n%s", rc, stdout, stderr, got)
	}

	d.stop(syscall.SIGTERM)
	d = start(t, dir, serveEnv)
	var p struct{ Name, ID, Channel string }
	if code, err := d.getJSON("/api/v1/persona", &p); err != nil || code != 200 || p.Name != "Ember" || p.Channel != "desktop:Ember" {
		t.Fatalf("persona after the switch: %d %v %+v", code, err, p)
	}
	code, out, err := d.post("/api/v1/greeting", map[string]string{"channel": p.Channel})
	if err != nil || code != 200 || !strings.Contains(out["message"].(map[string]any)["text"].(string), "Welcome to my tower") {
		t.Fatalf("Ember's greeting: %d %v %v", code, out, err)
	}
	if ms := d.messages(t, p.Channel); len(ms) != 1 {
		t.Errorf("Ember's conversation holds %v, want her greeting alone", ms)
	}
	if ms := d.messages(t, "desktop"); len(ms) != 2 || ms[0]["text"] != "你好" {
		t.Errorf("青蓝's conversation after the switch: %v", ms)
	}

	shell = withoutConfig(d.cliEnv())
	stdout, stderr, rc = cli(t, shell, "", "persona", "use", "default")
	if got, _ := os.ReadFile(cfgFile); rc != 0 || string(got) != "log: {level: info}\n" {
		t.Fatalf("use default: rc=%d\n%s%s\n%s", rc, stdout, stderr, got)
	}
	d.stop(syscall.SIGTERM)
	d = start(t, dir, serveEnv)
	if code, err := d.getJSON("/api/v1/persona", &p); err != nil || code != 200 || p.Channel != "desktop" || p.ID != "" {
		t.Fatalf("persona after switching back: %d %v %+v", code, err, p)
	}
	if ms := d.messages(t, "desktop"); len(ms) != 2 || ms[0]["text"] != "你好" {
		t.Errorf("青蓝's conversation after switching back: %v", ms)
	}
	d.stop(syscall.SIGTERM)
}

// withoutConfig is a CLI environment without $CYAN_CONFIG.
func withoutConfig(envv []string) []string {
	var out []string
	for _, e := range envv {
		if !strings.HasPrefix(e, "CYAN_CONFIG=") {
			out = append(out, e)
		}
	}
	return out
}
