package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The README is the front door: what cyan is, the two commands, three
// quick starts and the maps; the reference lives in docs/.
const readmeMaxLines = 250

func TestREADMEIsAFrontDoor(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "\n"); n >= readmeMaxLines {
		t.Errorf("README.md has %d lines; keep it under %d (the reference belongs in docs/)", n, readmeMaxLines)
	}
	for _, h := range []string{"## Two commands", "## Quick start 1", "## Quick start 2", "## Quick start 3", "## The docs", "## The source folders"} {
		if !strings.Contains(string(raw), "\n"+h) {
			t.Errorf("README.md has no %q section", h)
		}
	}
}

// TestREADMEMapsEveryFolder: the README's map of the source folders names
// every top-level folder that holds Go code.
func TestREADMEMapsEveryFolder(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, folders, ok := strings.Cut(string(raw), "\n## The source folders")
	if !ok {
		t.Fatal("README.md has no map of the source folders")
	}
	seen := map[string]bool{}
	for dir := range packages(t, root) {
		top, _, _ := strings.Cut(dir, "/")
		if top == "." || seen[top] {
			continue
		}
		seen[top] = true
		if !strings.Contains(folders, "`"+top+"/") {
			t.Errorf("the README's map of the source folders does not name %s/", top)
		}
	}
}

// pendingDocs are reference files another change writes (the config key
// reference, the API routes, the CLI verbs); until they are in the tree,
// links to them are not checked. Once a file exists, its links and anchors
// are checked like every other, and this list can shrink.
var pendingDocs = map[string]bool{
	"docs/configuration.md": true,
	"docs/http-api.md":      true,
	"docs/cli.md":           true,
}

// docFiles are README.md and every docs/*.md, relative to the root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

var (
	mdLink     = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	mdHeading  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	externalRe = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`)
)

// prose returns a Markdown file's lines outside fenced blocks, with their
// line numbers, inline code removed.
func prose(text string) (lines []string, numbers []int) {
	fenced := false
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines = append(lines, codeSpan.ReplaceAllString(l, ""))
			numbers = append(numbers, i+1)
		}
	}
	return lines, numbers
}

// anchors are a Markdown file's heading anchors, as GitHub makes them:
// lower case, letters, digits, spaces, - and _ kept, spaces made -,
// a repeated anchor numbered -1, -2….
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	lines, _ := prose(strings.ReplaceAll(text, "`", ""))
	for _, l := range lines {
		m := mdHeading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		slug := slugOf(m[2])
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

func slugOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestSlugOf(t *testing.T) {
	for _, tt := range []struct{ name, heading, want string }{
		{"plain", "The voice", "the-voice"},
		{"punctuation", "Quick start 2: the group bot (QQ and Telegram)", "quick-start-2-the-group-bot-qq-and-telegram"},
		{"apostrophe", "The voice's first audio", "the-voices-first-audio"},
		{"dot", "Lagrange.OneBot", "lagrangeonebot"},
		{"non-Latin", "青蓝 and 小蓝", "青蓝-and-小蓝"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := slugOf(tt.heading); got != tt.want {
				t.Errorf("slugOf(%q) = %q, want %q", tt.heading, got, tt.want)
			}
		})
	}
}

// TestDocLinksResolve: every relative link in README.md and docs/*.md
// names a file of the repository, and every #anchor a heading of its file.
func TestDocLinksResolve(t *testing.T) {
	root := repoRoot(t)
	texts := map[string]string{}
	read := func(rel string) (string, bool) {
		if s, ok := texts[rel]; ok {
			return s, true
		}
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return "", false
		}
		texts[rel] = string(raw)
		return string(raw), true
	}
	heads := map[string]map[string]bool{} // a file's anchors, made once
	checked := 0
	for _, file := range docFiles(t, root) {
		text, _ := read(file)
		lines, numbers := prose(text)
		for i, l := range lines {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if externalRe.MatchString(target) {
					continue
				}
				checked++
				where := file + ":" + strconv.Itoa(numbers[i])
				path, anchor, _ := strings.Cut(target, "#")
				rel := file
				if path != "" {
					rel = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), path)))
					if strings.HasPrefix(rel, "../") {
						t.Errorf("%s: %s leaves the repository", where, target)
						continue
					}
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
					if pendingDocs[rel] {
						continue
					}
					t.Errorf("%s: %s names no file (%s)", where, target, rel)
					continue
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(rel, ".md") {
					t.Errorf("%s: %s: an anchor into a file that is not Markdown", where, target)
					continue
				}
				if _, ok := heads[rel]; !ok {
					dest, _ := read(rel)
					heads[rel] = anchors(dest)
				}
				if !heads[rel][anchor] {
					t.Errorf("%s: %s: %s has no heading #%s", where, target, rel, anchor)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d relative links found; is the link pattern broken?", checked)
	}
}

// TestDocsHaveContents: every docs/*.md opens with a table of contents, a
// list of links to its own headings before its first section, that names
// every section (##).
func TestDocsHaveContents(t *testing.T) {
	root := repoRoot(t)
	for _, file := range docFiles(t, root)[1:] {
		raw, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		first := strings.Index(text, "\n## ")
		if first < 0 {
			t.Errorf("%s has no sections (##)", file)
			continue
		}
		// A generated reference keeps its contents under a "## Contents"
		// heading; the list then ends at the next section.
		if strings.HasPrefix(text[first:], "\n## Contents\n") {
			next := strings.Index(text[first+1:], "\n## ")
			if next < 0 {
				t.Errorf("%s has nothing after its contents", file)
				continue
			}
			first += 1 + next
		}
		toc := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^\s*- \[[^\]]+\]\(#([^)]+)\)`).FindAllStringSubmatch(text[:first], -1) {
			toc[m[1]] = true
		}
		if len(toc) == 0 {
			t.Errorf("%s has no table of contents before its first section", file)
			continue
		}
		lines, _ := prose(strings.ReplaceAll(text, "`", ""))
		for _, l := range lines {
			if strings.HasPrefix(l, "## ") && l != "## Contents" && !toc[slugOf(strings.TrimPrefix(l, "## "))] {
				t.Errorf("%s: the table of contents lacks %q", file, l)
			}
		}
	}
}
