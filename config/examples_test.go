package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// defaultsMark ends the sentence before a block that shows defaults only.
const defaultsMark = "(the defaults):"

// exampleBlock is one cyan.yaml example of the docs.
type exampleBlock struct {
	yaml     string
	defaults bool // the sentence before it ends in defaultsMark
}

// exampleBlocks returns every ```yaml block of README.md and docs/*.md
// that is a piece of cyan.yaml: its first key is a top-level key of Config.
// Persona front-matter, observer files and prompt scripts are other files
// and are left out.
func exampleBlocks(t *testing.T) map[string]exampleBlock {
	t.Helper()
	top := map[string]bool{}
	ct := reflect.TypeOf(Config{})
	for i := 0; i < ct.NumField(); i++ {
		if tag, _, _ := strings.Cut(ct.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			top[tag] = true
		}
	}
	files, _ := filepath.Glob("../docs/*.md")
	files = append([]string{"../README.md"}, files...)
	firstKey := regexp.MustCompile(`(?m)^([a-z_]+):`)
	out := map[string]exampleBlock{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```yaml" {
				continue
			}
			start := i + 1
			defaults := false
			for j := i - 1; j >= 0; j-- {
				if l := strings.TrimSpace(lines[j]); l != "" {
					defaults = strings.HasSuffix(l, defaultsMark)
					break
				}
			}
			indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " "))]
			var b []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				b = append(b, strings.TrimPrefix(lines[i], indent))
			}
			block := strings.Join(b, "\n") + "\n"
			if m := firstKey.FindStringSubmatch(block); m != nil && top[m[1]] && !strings.HasPrefix(strings.TrimSpace(block), "---") {
				out[filepath.Base(f)+":"+strconv.Itoa(start)] = exampleBlock{block, defaults}
			}
		}
	}
	return out
}

// TestExamplesInTheDocsLoad: every cyan.yaml example in the README and the
// docs loads as it is written — no unknown key, no bad value, no owner
// that names a bridge the example does not configure.
func TestExamplesInTheDocsLoad(t *testing.T) {
	blocks := exampleBlocks(t)
	if len(blocks) < 8 {
		t.Fatalf("found %d config examples in the docs; is the block pattern broken?", len(blocks))
	}
	for where, b := range blocks {
		block := b.yaml
		t.Run(where, func(t *testing.T) {
			// An example that names owners on bridges it does not
			// configure borrows the README's bridges.
			if strings.Contains(block, `"id:`) && !strings.Contains(block, "bridges:") {
				block += "bridges:\n  onebot:\n    - {name: qq, mode: reverse, access_token: tok}\n  telegram:\n    - {name: tg, token: \"1:x\"}\n"
			}
			// A placeholder for the reader's own id refuses the block as
			// written; with a real id put in, it loads.
			if filled := FillOwnerPlaceholders(block); filled != block {
				if _, err := loadYAML(t, block); err == nil || !strings.Contains(err.Error(), "placeholder") {
					t.Errorf("%s loads with its placeholders left in: %v", where, err)
				}
				block = filled
			}
			if _, err := loadYAML(t, block); err != nil {
				t.Errorf("%s does not load: %v\n%s", where, err, block)
			}
		})
	}
}

// TestExamplesShownAsDefaultsAreDefaults: a block the docs introduce as the
// defaults ("… (the defaults):") sets nothing that is not the default —
// loading it gives the configuration an empty file gives.
func TestExamplesShownAsDefaultsAreDefaults(t *testing.T) {
	dir := t.TempDir()
	load := func(yaml string) string {
		t.Helper()
		path := filepath.Join(dir, "cyan.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{EnvConfig: path, EnvDataDir: filepath.Join(dir, "data")}
		c, err := Load(func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("%v\n%s", err, yaml)
		}
		out, err := c.YAML()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	empty := strings.Split(load("{}\n"), "\n")
	n := 0
	for where, b := range exampleBlocks(t) {
		if !b.defaults {
			continue
		}
		n++
		got := strings.Split(load(b.yaml), "\n")
		if len(got) != len(empty) {
			t.Errorf("%s: the rendered configuration has %d lines, the default %d", where, len(got), len(empty))
			continue
		}
		for i := range got {
			if got[i] != empty[i] {
				t.Errorf("%s is shown as the defaults, but sets %q (the default: %q)", where, strings.TrimSpace(got[i]), strings.TrimSpace(empty[i]))
			}
		}
	}
	if n < 5 {
		t.Errorf("only %d blocks are marked %q; is the mark gone?", n, defaultsMark)
	}
}
