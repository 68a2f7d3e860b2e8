package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/packets"
)

// secretKinds are credential files by kind, as they lie in a home or a
// project: each is refused by read_file and unreadable inside the
// sandbox, by the one rule both use (Secrets and SecretContent).
var secretKinds = []struct{ kind, name, body string }{
	{"git config, token as password", "proj/.git/config", "[remote \"origin\"]\n\turl = https://x-access-token:SECRET@github.com/o/r.git\n"},
	{"git config, token as user", "proj2/.git/config", "[remote \"origin\"]\n\turl = https://ghp_SECRETSECRETSECRETSECRET1234@github.com/o/r\n"},
	{"git config, extraheader", "proj3/.git/config", "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic SECRET\n"},
	{"user gitconfig with a token", ".gitconfig", "[url \"https://u:SECRET@git.example.com/\"]\n\tinsteadOf = https://git.example.com/\n"},
	{"rclone", ".config/rclone/rclone.conf", "[drive]\ntoken = SECRET\n"},
	{"terraform rc", ".terraformrc", "credentials \"app.terraform.io\" { token = \"SECRET\" }\n"},
	{"terraform rc (windows name)", "AppData/terraform.rc", "token = SECRET\n"},
	{"terraform credentials", "elsewhere/credentials.tfrc.json", `{"credentials": {"x": {"token": "SECRET"}}}`},
	{"1Password op", ".config/op/config", `{"accounts": [{"shorthand": "SECRET"}]}`},
	{"1Password app data", ".config/1Password/settings/settings.json", "SECRET"},
	{"KeePass database", "vault/passwords.kdbx", "SECRET"},
	{"Firefox logins", ".mozilla/firefox/abc.default/logins.json", `{"logins": [{"encryptedPassword": "SECRET"}]}`},
	{"Firefox key4", ".mozilla/firefox/abc.default/key4.db", "SECRET"},
	{"Firefox cookies", ".mozilla/firefox/abc.default/cookies.sqlite", "SECRET"},
	{"Chrome Login Data", ".config/google-chrome/Default/Login Data", "SECRET"},
	{"Chrome cookies", ".config/google-chrome/Default/Network/Cookies", "SECRET"},
	{"Chrome Local State", ".config/google-chrome/Local State", `{"os_crypt": {"encrypted_key": "SECRET"}}`},
	{"fish history", ".local/share/fish/fish_history", "- cmd: export TOKEN=SECRET\n"},
	{"fish variables", ".local/share/fish/fish_variables", "SETUVAR TOKEN:SECRET\n"},
	{"python history", ".python_history", "SECRET"},
	{"node history", ".node_repl_history", "SECRET"},
	{"psql history", ".psql_history", "SECRET"},
	{"mysql history", ".mysql_history", "SECRET"},
	{"sqlite history", ".sqlite_history", "SECRET"},
	{"less history", ".lesshst", "SECRET"},
	{"redis-cli history", ".rediscli_history", "AUTH SECRET"},
	{"irb history", ".irb_history", "SECRET"},
	{"octave history", ".octave_hist", "SECRET"},
	{"PowerShell history", ".local/share/powershell/PSReadLine/ConsoleHost_history.txt", "SECRET"},
	{"atuin history", ".local/share/atuin/history.db", "SECRET"},
}

// secretAllowed look like the kinds above but hold nothing: they stay
// readable (git keeps working in a repository whose remote has no token).
var secretAllowed = map[string]string{
	"ok/.git/config":   "[remote \"origin\"]\n\turl = https://github.com/o/r.git\n[remote \"ssh\"]\n\turl = ssh://git@github.com/o/r.git\n",
	"ok/git/README.md": "FINE",
	"ok/history.md":    "FINE",
	"ok/notes.json":    "FINE",
}

func writeSecretKinds(t *testing.T, root string) {
	t.Helper()
	for _, k := range secretKinds {
		p := filepath.Join(root, k.name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(k.body), 0o600))
	}
	for name, body := range secretAllowed {
		p := filepath.Join(root, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(body), 0o600))
	}
}

// Every kind is refused by read_file, and what is like it but holds no
// secret is read.
func TestSecretKindsRefusedByReadFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSecretKinds(t, root)
	paths, err := NewPaths([]string{root}, t.TempDir(), t.TempDir())
	must(t, err)
	defer paths.Close()
	reg := New(Options{})
	for _, tl := range (Builtins{Paths: paths, Sandbox: &Sandbox{}}).Tools() {
		must(t, reg.Register(tl))
	}
	read := func(p string) Outcome {
		b, _ := json.Marshal(map[string]any{"path": p})
		return reg.CallAsOwner(context.Background(), packets.Caller{}, "read_file", b)
	}
	for _, k := range secretKinds {
		t.Run(k.kind, func(t *testing.T) {
			if o := read(filepath.Join(root, k.name)); !o.Failed() || strings.Contains(o.Text(), "SECRET") || !strings.Contains(o.Error, "denied") {
				t.Errorf("read_file %s: %+v", k.name, o)
			}
		})
	}
	for name := range secretAllowed {
		if o := read(filepath.Join(root, name)); o.Failed() {
			t.Errorf("read_file %s (no secret): %+v", name, o)
		}
	}
}

// Every kind is covered inside the sandbox: a command that reads it by
// its plain name (past the terminal's lexical check) gets nothing.
func TestSecretKindsCoveredInTheSandbox(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	root := t.TempDir()
	writeSecretKinds(t, root)
	j := NewJail(JailOptions{Roots: []string{root}})
	if j.Err() != nil {
		t.Fatalf("no sandbox: %v", j.Err())
	}
	sb := &Sandbox{Jail: j, Timeout: 30 * time.Second}
	var cmd strings.Builder
	for _, k := range secretKinds {
		cmd.WriteString("cat " + q(k.name) + " 2>/dev/null; echo '<" + k.kind + ">'\n")
	}
	for name := range secretAllowed {
		cmd.WriteString("cat " + q(name) + "; echo\n")
	}
	res, err := sb.Run(context.Background(), []string{"/bin/sh", "-c", cmd.String()}, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range secretKinds {
		if !strings.Contains(res.Output, "<"+k.kind+">") {
			t.Errorf("%s: the command did not reach it:\n%s", k.kind, res.Output)
		}
	}
	for _, line := range strings.Split(res.Output, "\n") {
		if strings.Contains(line, "SECRET") {
			t.Errorf("read inside the sandbox: %q", line)
		}
	}
	if strings.Count(res.Output, "FINE") != 3 || !strings.Contains(res.Output, "https://github.com/o/r.git") {
		t.Errorf("a file without a secret is covered too:\n%s", res.Output)
	}
}

func TestSecretContent(t *testing.T) {
	cases := []struct {
		path, body string
		want       bool
	}{
		{"r/.git/config", "url = https://u:p@h/x", true},
		{"r/.git/config", "url = https://h/x", false},
		{"r/.git/config", "url = ssh://git@h/x", false},
		{"r/.git/config", "url = git@github.com:o/r.git", false},
		{"r/.git/config", "\tExtraHeader = \"Authorization: Bearer x\"", true},
		{"r/notes.txt", "url = https://u:p@h/x", false}, // a URL in a note is not a git config
		{"x/key", "-----BEGIN OPENSSH PRIVATE KEY-----\n", true},
		{"home/.config/git/config", "url = https://user:tok@h/", true},
	}
	for _, c := range cases {
		if _, got := SecretContent(c.path, []byte(c.body)); got != c.want {
			t.Errorf("SecretContent(%q, %q) = %v", c.path, c.body, got)
		}
	}
}
