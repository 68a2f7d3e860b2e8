package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Doc is one Markdown file of the reference.
type Doc struct {
	Path  string
	Lines []string
}

// Read reads a file of the reference.
func Read(path string) (*Doc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("doccheck: %w", err)
	}
	return Parse(filepath.ToSlash(path), string(b)), nil
}

// Parse reads a document from its text; path names it in errors.
func Parse(path, text string) *Doc {
	return &Doc{Path: path, Lines: strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")}
}

// Where is "path:line" for a 1-based line.
func (d *Doc) Where(line int) string { return fmt.Sprintf("%s:%d", d.Path, line) }

// prose calls fn for every line outside fenced code blocks, with its
// 1-based number.
func (d *Doc) prose(fn func(n int, line string)) {
	fence := ""
	for i, l := range d.Lines {
		t := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		fn(i+1, l)
	}
}

// Row is one row of a table: its cells, trimmed, and its line.
type Row struct {
	Line  int
	Cells []string
}

// Table is a Markdown table: its header cells and its rows.
type Table struct {
	Line   int
	Header []string
	Rows   []Row
}

// Tables lists the document's tables (outside code blocks), in order.
func (d *Doc) Tables() []Table {
	var out []Table
	var cur *Table
	var prev *Row
	d.prose(func(n int, l string) {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "|") {
			if cur != nil {
				out = append(out, *cur)
				cur = nil
			}
			prev = nil
			return
		}
		cells := Cells(t)
		switch {
		case cur == nil && prev == nil:
			prev = &Row{Line: n, Cells: cells}
		case cur == nil:
			if !isDelimiter(cells) {
				prev = &Row{Line: n, Cells: cells}
				return
			}
			cur = &Table{Line: prev.Line, Header: prev.Cells}
		default:
			cur.Rows = append(cur.Rows, Row{Line: n, Cells: cells})
		}
	})
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

func isDelimiter(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, ":- ") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return len(cells) > 0
}

// Cells splits a table row at its unescaped pipes that are not inside a
// code span, and trims each cell.
func Cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var cells []string
	var b strings.Builder
	code := false
	for i := 0; i < len(row); i++ {
		c := row[i]
		switch {
		case c == '\\' && i+1 < len(row) && row[i+1] == '|':
			b.WriteByte('|')
			i++
		case c == '`':
			code = !code
			b.WriteByte(c)
		case c == '|' && !code:
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// Code is the text of the first code span of a cell; ok is false when
// the cell has none.
func Code(cell string) (code string, ok bool) {
	_, rest, ok := strings.Cut(cell, "`")
	if !ok {
		return "", false
	}
	code, _, ok = strings.Cut(rest, "`")
	return code, ok
}

// Column is the index of the header cell named name (case-insensitive),
// or -1.
func (t Table) Column(name string) int {
	for i, h := range t.Header {
		if strings.EqualFold(strings.TrimSpace(h), name) {
			return i
		}
	}
	return -1
}

// Heading is a "#"-heading outside code blocks.
type Heading struct {
	Line   int
	Level  int
	Text   string
	Anchor string // the id GitHub gives it
}

var headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)

// Headings lists the document's headings with their anchors, numbered as
// GitHub numbers repeated ones (-1, -2, …).
func (d *Doc) Headings() []Heading {
	var out []Heading
	seen := map[string]int{}
	d.prose(func(n int, l string) {
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			return
		}
		a := Slug(m[2])
		if k := seen[a]; k > 0 {
			seen[a] = k + 1
			a = fmt.Sprintf("%s-%d", a, k)
		} else {
			seen[a] = 1
		}
		out = append(out, Heading{Line: n, Level: len(m[1]), Text: m[2], Anchor: a})
	})
	return out
}

// Slug is the anchor GitHub makes of a heading: lower case, letters,
// digits, - and _ kept, spaces made -, the rest dropped.
func Slug(heading string) string {
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

var tocLink = regexp.MustCompile(`^\s*[-*]\s+\[[^\]]+\]\(#([^)]+)\)`)

// CheckTOC checks the table of contents: the list of links under the
// heading "Contents" names every heading of the levels 2 to maxLevel that
// follows it, in order, and nothing else.
func (d *Doc) CheckTOC(maxLevel int) []error {
	var errs []error
	hs := d.Headings()
	toc := -1
	for i, h := range hs {
		if h.Text == "Contents" {
			toc = i
			break
		}
	}
	if toc < 0 {
		return []error{fmt.Errorf("%s: no table of contents: add a \"## Contents\" heading with a list of links to the headings", d.Path)}
	}
	end := len(d.Lines)
	if toc+1 < len(hs) {
		end = hs[toc+1].Line - 1
	}
	var links []string
	for n := hs[toc].Line; n < end; n++ {
		if m := tocLink.FindStringSubmatch(d.Lines[n]); m != nil {
			links = append(links, m[1])
		}
	}
	var want []Heading
	for _, h := range hs[toc+1:] {
		if h.Level >= 2 && h.Level <= maxLevel {
			want = append(want, h)
		}
	}
	for i := 0; i < max(len(links), len(want)); i++ {
		switch {
		case i >= len(links):
			errs = append(errs, fmt.Errorf("%s: the contents lack %q (line %d): add - [%s](#%s)", d.Path, want[i].Text, want[i].Line, want[i].Text, want[i].Anchor))
			return errs
		case i >= len(want):
			errs = append(errs, fmt.Errorf("%s: the contents link #%s, which is no heading after them", d.Path, links[i]))
			return errs
		case links[i] != want[i].Anchor:
			errs = append(errs, fmt.Errorf("%s: contents entry %d links #%s, but the heading there is %q (#%s, line %d)", d.Path, i+1, links[i], want[i].Text, want[i].Anchor, want[i].Line))
			return errs
		}
	}
	return errs
}

// Between is the text between the lines "<!-- begin NAME -->" and
// "<!-- end NAME -->", and the index of the first line inside; ok is
// false when the markers are missing.
func (d *Doc) Between(name string) (text string, first int, ok bool) {
	begin, end := "<!-- begin "+name+" -->", "<!-- end "+name+" -->"
	b, e := -1, -1
	for i, l := range d.Lines {
		switch strings.TrimSpace(l) {
		case begin:
			b = i
		case end:
			e = i
		}
	}
	if b < 0 || e < b {
		return "", 0, false
	}
	return strings.Join(d.Lines[b+1:e], "\n"), b + 1, true
}

// Replace returns the document's text with the lines between the markers
// of name replaced by text.
func (d *Doc) Replace(name, text string) (string, error) {
	_, first, ok := d.Between(name)
	if !ok {
		return "", fmt.Errorf("%s: no <!-- begin %s --> … <!-- end %s --> markers", d.Path, name, name)
	}
	last := first
	for last < len(d.Lines) && strings.TrimSpace(d.Lines[last]) != "<!-- end "+name+" -->" {
		last++
	}
	lines := append(append(append([]string{}, d.Lines[:first]...), strings.Split(strings.TrimSuffix(text, "\n"), "\n")...), d.Lines[last:]...)
	return strings.Join(lines, "\n"), nil
}
