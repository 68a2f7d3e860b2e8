package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docCommand is one cyan command line of a shell block in the docs.
type docCommand struct {
	where string   // file:line
	args  []string // after "cyan"
}

var envAssign = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)

// docCommands returns the cyan command lines of every ```sh block of
// README.md and docs/*.md: comments cut, continuations joined, leading
// environment assignments and `go run ./cmd/cyan` read as cyan.
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	files, _ := filepath.Glob("../../docs/*.md")
	files = append([]string{"../../README.md"}, files...)
	var out []docCommand
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```sh" {
				continue
			}
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				where := filepath.Base(f) + ":" + strconv.Itoa(i+1)
				line := lines[i]
				for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
					i++
					line = strings.TrimSuffix(line, "\\") + " " + lines[i]
				}
				if c := strings.Index(line, " #"); c >= 0 {
					line = line[:c]
				}
				line = strings.ReplaceAll(line, "go run ./cmd/cyan", "cyan")
				for _, part := range strings.Split(line, ";") {
					words := shellWords(part)
					for len(words) > 0 && envAssign.MatchString(words[0]) {
						words = words[1:]
					}
					if len(words) > 0 && words[0] == "cyan" {
						out = append(out, docCommand{where, words[1:]})
					}
				}
			}
		}
	}
	return out
}

// shellWords splits a command line at spaces outside single and double
// quotes (enough for the docs' examples).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// TestDocCommandsAreKnown: every cyan command the README and the docs show
// is a command of the binary's own table (cyan help --json), and every flag
// it gives is one of that command's flags.
func TestDocCommandsAreKnown(t *testing.T) {
	t.Parallel()
	stdout, stderr, rc := cli(t, []string{"HOME=" + t.TempDir()}, "", "help", "--json")
	if rc != 0 {
		t.Fatalf("cyan help --json: %d %s", rc, stderr)
	}
	var table struct {
		Commands []struct {
			Command string
			Flags   []struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &table); err != nil {
		t.Fatal(err)
	}
	flags := map[string]map[string]bool{}
	nouns := map[string]bool{}
	for _, c := range table.Commands {
		fs := map[string]bool{"help": true}
		for _, f := range c.Flags {
			fs[f.Name] = true
			if f.Name == "limit" {
				fs["n"] = true
			}
		}
		flags[c.Command] = fs
		if noun, _, ok := strings.Cut(c.Command, " "); ok {
			nouns[noun] = true
		}
	}
	cmds := docCommands(t)
	if len(cmds) < 30 {
		t.Fatalf("found %d cyan commands in the docs; is the block pattern broken?", len(cmds))
	}
	for _, c := range cmds {
		if len(c.args) == 0 {
			t.Errorf("%s: cyan without a command", c.where)
			continue
		}
		name, rest := c.args[0], c.args[1:]
		if nouns[name] {
			if len(rest) > 0 && flags[name+" "+rest[0]] != nil {
				name, rest = name+" "+rest[0], rest[1:]
			} else {
				name += " ls"
			}
		}
		fs := flags[name]
		if fs == nil {
			t.Errorf("%s: cyan %s: no such command", c.where, strings.Join(c.args, " "))
			continue
		}
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") || a == "-" {
				continue
			}
			f, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !fs[f] {
				t.Errorf("%s: cyan %s has no flag %s", c.where, name, a)
			}
		}
	}
}
