package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

// The file tools refuse every kind of credential file in a root, by name
// at any depth and by a private key's header, for reading and writing; the
// terminal refuses a command that names one (the sandbox covers them
// whatever the spelling: TestSandboxShellTricks). tools.secrets adds and
// drops entries.
func TestSecretsRefusedByTheFileTools(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	secret := map[string]string{
		".aws/credentials":            "[default]\naws_secret_access_key = AKIA-SECRET\n",
		".azure/accessTokens.json":    "SECRET",
		".config/gcloud/credentials":  "SECRET",
		"proj/.netrc":                 "machine x login y password SECRET\n",
		".git-credentials":            "https://u:SECRET@example.com\n",
		"proj/.npmrc":                 "//registry/:_authToken=SECRET\n",
		".pypirc":                     "password = SECRET\n",
		".docker/config.json":         `{"auths": {"x": {"auth": "SECRET"}}}`,
		".kube/config":                "token: SECRET\n",
		".bash_history":               "export TOKEN=SECRET\n",
		".zsh_history":                "SECRET",
		".python_history":             "SECRET",
		"app/.envrc":                  "export KEY=SECRET\n",
		"app/.env":                    "KEY=SECRET\n",
		"app/.env.production":         "KEY=SECRET\n",
		".ssh/id_ed25519":             "SECRET",
		".gnupg/pubring.kbx":          "SECRET",
		"keys/id_rsa":                 "SECRET",
		"deploy/server.pem":           "-----BEGIN RSA PRIVATE KEY-----\nSECRET\n-----END RSA PRIVATE KEY-----\n",
		"deploy/ec.txt":               "\n-----BEGIN EC PRIVATE KEY-----\nSECRET\n",
		"deploy/openssh":              "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET\n",
		"deploy/pkcs8":                "-----BEGIN ENCRYPTED PRIVATE KEY-----\nSECRET\n",
		"deploy/pgp.asc":              "-----BEGIN PGP PRIVATE KEY BLOCK-----\nSECRET\n",
		"deploy/putty.ppk":            "PuTTY-User-Key-File-3: ssh-ed25519\nSECRET\n",
		"deploy/age.txt":              "AGE-SECRET-KEY-1SECRET\n",
		".config/rclone/rclone.conf":  "SECRET", // added by tools.secrets below
		"notes/.config/gh/hosts.yml":  "oauth_token: SECRET\n",
		".cargo/credentials.toml":     "token = SECRET\n",
		"db/.pgpass":                  "h:5432:d:u:SECRET\n",
		"vault/.vault-token":          "SECRET",
		".local/share/keyrings/login": "SECRET",
	}
	allowed := map[string]string{
		"notes/ok.txt":        "FINE",
		"deploy/cert.pem":     "-----BEGIN CERTIFICATE-----\nFINE\n",
		"keys/id_rsa.pub":     "ssh-ed25519 AAAA FINE",
		"docs/history.md":     "FINE",
		".viminfo":            "FINE", // dropped by tools.secrets below
		".docker/daemon.json": "FINE",
		"environment.txt":     "FINE",
	}
	for _, m := range []map[string]string{secret, allowed} {
		for name, body := range m {
			p := filepath.Join(root, name)
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte(body), 0o600))
		}
	}
	secrets, err := NewSecrets([]string{".config/rclone", "!.viminfo"})
	must(t, err)
	paths, err := NewPaths([]string{root}, t.TempDir(), t.TempDir())
	must(t, err)
	defer paths.Close()
	paths.WithSecrets(secrets)
	reg := New(Options{})
	for _, tl := range (Builtins{Paths: paths, Sandbox: &Sandbox{}}).Tools() {
		must(t, reg.Register(tl))
	}
	call := func(tool string, args map[string]any) Outcome {
		b, _ := json.Marshal(args)
		return reg.CallAsOwner(context.Background(), packets.Caller{}, tool, b)
	}
	for name := range secret {
		p := filepath.Join(root, name)
		for _, ref := range []string{p, "%[" + p + "] Line 1 ~ Line 2"} {
			if o := call("read_file", map[string]any{"path": ref}); !o.Failed() || strings.Contains(o.Text(), "SECRET") || !strings.Contains(o.Error, "denied") {
				t.Errorf("read_file %s: %+v", ref, o)
			}
		}
		if o := call("write_file", map[string]any{"path": p, "content": "x"}); !o.Failed() {
			t.Errorf("write_file %s: %+v", name, o)
		}
		if b, _ := os.ReadFile(p); string(b) != secret[name] {
			t.Errorf("%s was changed: %q", name, b)
		}
	}
	// A link inside the roots to a key is refused by the key's own name or content.
	must(t, os.Symlink(filepath.Join(root, "deploy", "server.pem"), filepath.Join(root, "notes", "innocent.txt")))
	if o := call("read_file", map[string]any{"path": filepath.Join(root, "notes", "innocent.txt")}); !o.Failed() || strings.Contains(o.Text(), "SECRET") {
		t.Errorf("a link to a key: %+v", o)
	}
	for name := range allowed {
		if o := call("read_file", map[string]any{"path": filepath.Join(root, name)}); o.Failed() || !strings.Contains(o.Text(), "FINE") {
			t.Errorf("read_file %s (not a secret): %+v", name, o)
		}
	}
	// The terminal's lexical check names the kind before anything runs.
	for _, cmd := range []string{"cat ~/.aws/credentials", "cat .netrc", "tail .bash_history", "cat .git-credentials", "cat .kube/config", "cat ~/.config/rclone/rclone.conf"} {
		if o := call("terminal", map[string]any{"command": cmd}); !o.Failed() || !strings.Contains(o.Error, "never touch") {
			t.Errorf("terminal %q: %+v", cmd, o)
		}
	}
}

func TestSecretsList(t *testing.T) {
	s, err := NewSecrets(nil)
	must(t, err)
	for _, p := range []string{"/h/.aws", "/h/.aws/credentials", "a/b/.env.local", "/x/.docker/config.json", "/x/.kube/config", "/h/.node_repl_history", "/h/.config/gcloud/x/y"} {
		if _, ok := s.Match(p); !ok {
			t.Errorf("%s is not a secret", p)
		}
	}
	for _, p := range []string{"/h/docker/config.json", "/h/.kube/cache/x", "/h/.config/gcloudish", "/h/environment", "/h/history.txt", "/h/id_rsa.pub"} {
		if what, ok := s.Match(p); ok {
			t.Errorf("%s matched %s", p, what)
		}
	}
	for _, bad := range [][]string{{""}, {"!"}, {"../x"}, {"a//b"}, {"!.not-a-default"}, {"a\nb"}} {
		if _, err := NewSecrets(bad); err == nil || !strings.Contains(err.Error(), "tools.secrets[0]") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if !IsPrivateKey([]byte("\ufeff  -----BEGIN DSA PRIVATE KEY-----")) || IsPrivateKey([]byte("-----BEGIN PUBLIC KEY-----")) || IsPrivateKey([]byte("say -----BEGIN PRIVATE KEY----- later"[:3])) {
		t.Error("IsPrivateKey")
	}
}
