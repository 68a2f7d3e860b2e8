package config

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func loadYAML(t *testing.T, yaml string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "cyan.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvConfig: path, EnvDataDir: filepath.Join(dir, "data")}
	return Load(func(k string) string { return env[k] })
}

func TestOwnersMustNameAConfiguredBridge(t *testing.T) {
	bridges := "bridges:\n  onebot:\n    - {name: qq, mode: reverse, access_token: tok}\n  telegram:\n    - {name: tg, token: \"1:x\"}\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"the default", "log: {level: info}\n", ""},
		{"local and ids of the bridges", bridges + "permissions:\n  owners: [local, \"id:qq:1\", \"id:tg:2\", hareru]\n", ""},
		{"a platform instead of the bridge's name", bridges + "permissions:\n  owners: [\"id:telegram:4242\"]\n",
			`"id:telegram:4242" names no bridge "telegram", so it would never match anyone; the bridges are named qq, tg (e.g. id:qq:4242)`},
		{"no bridge at all", "permissions:\n  owners: [\"id:qq:1\"]\n", "no bridge is configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadYAML(t, tt.yaml)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tt.name == "the default" && !slices.Equal(c.Permissions.Owners, []string{"local"}) {
					t.Errorf("default owners %q, want [local]", c.Permissions.Owners)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// TestTheREADMEsOwnersNameItsBridges: every id:<bridge>: owner the README
// and the docs show names a bridge one of their examples configures, and
// the README's chat-app example loads as it is.
func TestTheREADMEsOwnersNameItsBridges(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	all := readme
	docs, _ := filepath.Glob("../docs/*.md")
	for _, f := range docs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all += string(b)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+- \{?name: ([a-z][a-z0-9_-]*)`).FindAllStringSubmatch(all, -1) {
		names[m[1]] = true
	}
	ids := regexp.MustCompile(`id:([a-z][a-z0-9_-]*):(?:[0-9]+|<[^>]+>)`).FindAllStringSubmatch(all, -1)
	if len(ids) == 0 {
		t.Fatal("the README shows no id:<bridge>:<user id> owner")
	}
	for _, m := range ids {
		if !names[m[1]] {
			t.Errorf("the docs show %s, but configure no bridge named %q (they name %v)", m[0], m[1], names)
		}
	}
	start := strings.Index(readme, "```yaml\nbridges:\n  onebot:")
	if start < 0 {
		t.Fatal("the README's chat-app example is gone")
	}
	block := readme[start+len("```yaml\n"):]
	block = block[:strings.Index(block, "```")]
	if _, err := loadYAML(t, block); err == nil || !strings.Contains(err.Error(), "placeholder") {
		t.Fatalf("the README's chat-app example loads with its placeholders: %v", err)
	}
	c, err := loadYAML(t, FillOwnerPlaceholders(block))
	if err != nil {
		t.Fatalf("the README's chat-app example does not load with real ids: %v\n%s", err, block)
	}
	if !slices.Contains(c.Permissions.Owners, "local") {
		t.Errorf("the README's chat-app example drops local: %q", c.Permissions.Owners)
	}
}
