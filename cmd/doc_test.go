package cmd

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/doccheck"
)

//go:generate go test -run TestCLIDocIsTrue -update-docs

// cliDocPath is the command-line reference this file writes and checks.
const cliDocPath = "../docs/cli.md"

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated parts of docs/cli.md from the command table")

// cliDoc renders the generated parts of docs/cli.md from the command
// table (what 'cyan help --json' prints) into the document's markers:
// "verbs" (every verb, its usage, flags and example), "exit" (the exit
// statuses) and "contents" (the headings of the whole page).
func cliDoc(d *doccheck.Doc) (string, error) {
	table := commands()
	var b strings.Builder
	section := func(title, intro string, pick func(v *verb) bool) {
		fmt.Fprintf(&b, "## %s\n\n%s\n", title, intro)
		for i := range table {
			v := &table[i]
			if !pick(v) {
				continue
			}
			writeVerb(&b, v)
		}
	}
	section("Actions", "One word each: `cyan ACTION [flags] [arguments]`.", func(v *verb) bool { return v.noun == "" })
	b.WriteString("\n")
	section("Resources", "`cyan NOUN VERB [flags] [arguments]`; a noun alone is its `ls`.", func(v *verb) bool { return v.noun != "" })
	text, err := d.Replace("verbs", strings.TrimRight(b.String(), "\n"))
	if err != nil {
		return "", err
	}
	var ex strings.Builder
	ex.WriteString("| status | meaning |\n|---|---|\n")
	for _, e := range exitCodes {
		fmt.Fprintf(&ex, "| %d | %s |\n", e.Code, cellText(e.Meaning))
	}
	d = doccheck.Parse(d.Path, text)
	if text, err = d.Replace("exit", ex.String()); err != nil {
		return "", err
	}
	d = doccheck.Parse(d.Path, text)
	var toc strings.Builder
	after := false
	for _, h := range d.Headings() {
		if h.Text == "Contents" {
			after = true
			continue
		}
		if !after || h.Level < 2 || h.Level > 4 {
			continue
		}
		fmt.Fprintf(&toc, "%s- [%s](#%s)\n", strings.Repeat("  ", h.Level-2), h.Text, h.Anchor)
	}
	return d.Replace("contents", toc.String())
}

var nounSummary = func() map[string]string {
	m := map[string]string{}
	for _, n := range nouns() {
		m[n.name] = n.summary
	}
	return m
}()

// writeVerb writes one verb's section: what it does, its usage, its flags
// and its example, from the same table and flag set help prints.
func writeVerb(b *strings.Builder, v *verb) {
	if v.noun != "" && v.name == verbsOf(commands(), v.noun)[0].name {
		fmt.Fprintf(b, "\n### `cyan %s`\n\n%s.\n", v.noun, upperFirst(nounSummary[v.noun]))
	}
	level := "###"
	if v.noun != "" {
		level = "####"
	}
	fmt.Fprintf(b, "\n%s `cyan %s`\n\n%s.\n\n", level, v.path(), upperFirst(v.summary))
	fmt.Fprintf(b, "Usage: `%s`", usageLine(v))
	if v.noun != "" && v.name == "ls" {
		fmt.Fprintf(b, " (or `cyan %s`)", v.noun)
	}
	if v.daemon {
		b.WriteString(" — talks to the running daemon (exit 3 when none answers)")
	}
	b.WriteString("\n")
	if v.more != "" {
		fmt.Fprintf(b, "\n%s\n", strings.TrimSpace(v.more))
	}
	f := newFlags(v)
	v.setup(f)
	if fl := f.list(); len(fl) > 0 {
		b.WriteString("\n| flag | default | what it does |\n|---|---|---|\n")
		for _, x := range fl {
			name := "--" + x.Name
			if x.Arg != "" {
				name += " " + x.Arg
			}
			if x.Alias != "" {
				name = "-" + x.Alias + ", " + name
			}
			def := ""
			if x.Default != "" {
				def = "`" + x.Default + "`"
			}
			fmt.Fprintf(b, "| `%s` | %s | %s |\n", name, def, cellText(x.Usage))
		}
	}
	if len(v.example) > 0 {
		fmt.Fprintf(b, "\nExample: `cyan %s %s`\n", v.path(), shellJoin(v.example))
	}
}

// cellText makes a line safe inside a table cell.
func cellText(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

var verbHeading = regexp.MustCompile("^`cyan ([a-z- ]+)`$")

// checkCLIDoc compares the doc with what the command table renders (want):
// the verbs it has a section for, both ways, then every line.
func checkCLIDoc(d *doccheck.Doc, want string) []error {
	var errs []error
	var documented []string
	for _, h := range d.Headings() {
		if m := verbHeading.FindStringSubmatch(h.Text); m != nil && h.Level >= 3 {
			if h.Level == 3 && slices.ContainsFunc(nouns(), func(n noun) bool { return n.name == m[1] }) {
				continue // a noun's heading
			}
			documented = append(documented, m[1])
		}
	}
	var table []string
	for _, v := range commands() {
		table = append(table, v.path())
	}
	for _, v := range table {
		if !slices.Contains(documented, v) {
			errs = append(errs, fmt.Errorf("%s has no section for `cyan %s`: run go test ./cmd -run TestCLIDocIsTrue -update-docs", d.Path, v))
		}
	}
	for _, v := range documented {
		if !slices.Contains(table, v) {
			errs = append(errs, fmt.Errorf("%s documents `cyan %s`, which is not a verb of the command table", d.Path, v))
		}
	}
	if got := strings.Join(d.Lines, "\n"); got != want {
		gl, wl := d.Lines, strings.Split(want, "\n")
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		line := func(ls []string) string {
			if i < len(ls) {
				return ls[i]
			}
			return "(end of file)"
		}
		errs = append(errs, fmt.Errorf("%s:%d is not what the command table renders:\n have %q\n want %q\nrun go test ./cmd -run TestCLIDocIsTrue -update-docs", d.Path, i+1, line(gl), line(wl)))
	}
	return append(errs, d.CheckTOC(4)...)
}

// TestCLIDocIsTrue holds docs/cli.md to the command table: its generated
// parts (every verb with its usage, flags and example; the exit statuses;
// the contents) are what the table renders today, and the verbs it has a
// section for are exactly the table's. Run with -update-docs to rewrite
// them after changing a verb.
func TestCLIDocIsTrue(t *testing.T) {
	d, err := doccheck.Read(cliDocPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := cliDoc(d)
	if err != nil {
		t.Fatal(err)
	}
	if *updateDocs {
		if err := os.WriteFile(cliDocPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		d = doccheck.Parse(cliDocPath, want)
	}
	for _, err := range checkCLIDoc(d, want) {
		t.Error(err)
	}
}

// TestCLIDocCheckFails: a verb's section removed, a section for a verb
// the table lacks, and a flag's text changed are each found.
func TestCLIDocCheckFails(t *testing.T) {
	d, err := doccheck.Read(cliDocPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := cliDoc(d)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(d.Lines, "\n")
	cases := []struct{ name, from, to, want string }{
		{"missing", "#### `cyan memory forget`", "#### memory forget", "no section for `cyan memory forget`"},
		{"extra", "### `cyan doctor`", "### `cyan doctor`\n\n#### `cyan doctor fix`", "documents `cyan doctor fix`, which is not a verb"},
		{"flag", "| the channel (conversation) to chat in |", "| the chat's channel |", "is not what the command table renders"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(text, c.from) {
				t.Fatalf("the doc has no %q to change", c.from)
			}
			errs := checkCLIDoc(doccheck.Parse(cliDocPath, strings.Replace(text, c.from, c.to, 1)), want)
			if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), c.want) }) {
				t.Errorf("errors %v, want one saying %q", errs, c.want)
			}
		})
	}
}
