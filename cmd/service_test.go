package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestSystemdUnit(t *testing.T) {
	unit := systemdUnit(serviceSpec{Binary: "/home/me/bin/cyan", DataDir: "/home/me/.local/share/cyan", Stop: 15 * time.Second,
		Env: [][2]string{{"CYAN_DATA_DIR", "/home/me/.local/share/cyan"}, {"CYAN_LLM_API_KEY", `sk-"x"%$y`}}})
	for _, want := range []string{
		"[Service]\nType=simple\nExecStart=\"/home/me/bin/cyan\" serve\n",
		"Environment=\"CYAN_DATA_DIR=/home/me/.local/share/cyan\"\n",
		`Environment="CYAN_LLM_API_KEY=sk-\"x\"%%$$y"` + "\n",
		"Restart=on-failure\n", "TimeoutStopSec=15\n", "[Install]\nWantedBy=default.target\n",
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q:\n%s", want, unit)
		}
	}
	plist := launchdPlist(serviceSpec{Binary: "/Users/me/bin/cyan", DataDir: "/Users/me/cyan", Stop: 15 * time.Second,
		Env: [][2]string{{"CYAN_LLM_MODEL", "a<b>&c"}}})
	for _, want := range []string{"<key>Label</key><string>cyan</string>", "<string>/Users/me/bin/cyan</string><string>serve</string>",
		"<key>CYAN_LLM_MODEL</key><string>a&lt;b&gt;&amp;c</string>", "<key>SuccessfulExit</key><false/>", "<integer>15</integer>"} {
		if !strings.Contains(plist, want) {
			t.Errorf("the plist lacks %q:\n%s", want, plist)
		}
	}
}

// TestServiceInstall writes the unit where systemd looks for it, with the
// environment cyan runs with now, readable by its owner alone; nothing is
// started (--no-start), and uninstall finds no systemctl (PATH is empty).
func TestServiceInstall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the systemd unit is Linux's")
	}
	home := t.TempDir()
	cfgFile := filepath.Join(home, "my.yaml")
	os.WriteFile(cfgFile, []byte("shutdown_timeout: 20s\n"), 0o600)
	env := map[string]string{"HOME": home, "CYAN_DATA_DIR": filepath.Join(home, "data"), "CYAN_CONFIG": cfgFile,
		"CYAN_LLM_MODEL": "qwen3:8b", "PATH": "/usr/bin:/bin"}
	rc, out, errs := runCmd(env, "service", "install", "--no-start", "--binary", "/opt/cyan/bin/cyan")
	if rc != 0 || !strings.Contains(out, "start it with: systemctl --user enable --now cyan.service") {
		t.Fatalf("install: rc=%d %s %s", rc, out, errs)
	}
	path := filepath.Join(home, ".config", "systemd", "user", "cyan.service")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	unit := string(b)
	for _, want := range []string{`ExecStart="/opt/cyan/bin/cyan" serve`, `Environment="CYAN_CONFIG=` + cfgFile + `"`,
		`Environment="CYAN_DATA_DIR=` + filepath.Join(home, "data") + `"`, `Environment="CYAN_LLM_MODEL=qwen3:8b"`, "TimeoutStopSec=25"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q:\n%s", want, unit)
		}
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the unit's mode is %v, want 0600 (it may hold an API key)", st.Mode().Perm())
	}
	rc, out, _ = runCmd(env, "service", "status", "--json")
	var status map[string]any
	if rc != 0 || json.Unmarshal([]byte(out), &status) != nil || status["installed"] != true || status["running"] != false || status["manager"] != "systemd" {
		t.Fatalf("status: rc=%d %s", rc, out)
	}
	t.Setenv("PATH", t.TempDir())
	rc, out, errs = runCmd(env, "service", "uninstall")
	if _, err := os.Stat(path); rc != 0 || !os.IsNotExist(err) || !strings.Contains(errs, "removing the file anyway") {
		t.Fatalf("uninstall: rc=%d %s %s (%v)", rc, out, errs, err)
	}
	if rc, out, _ = runCmd(env, "service", "uninstall"); rc != 0 || !strings.Contains(out, "not installed") {
		t.Fatalf("uninstall again: rc=%d %s", rc, out)
	}
}
