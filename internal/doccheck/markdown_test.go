package doccheck

import (
	"slices"
	"strings"
	"testing"
)

const sample = "# Title\n\n## Contents\n\n- [First part](#first-part)\n- [`cyan memory ls`](#cyan-memory-ls)\n- [First part](#first-part-1)\n\n## First part\n\n| key | default | what it does |\n|---|---|---|\n| `a.b` | `30s` | one \\| two `x | y` |\n| `c` | `\"\"` | three |\n\n```\n## not a heading\n| not | a table |\n|---|---|\n```\n\n### `cyan memory ls`\n\n## First part\n\n<!-- begin gen -->\nold\n<!-- end gen -->\n"

func TestTablesCodeAndHeadings(t *testing.T) {
	d := Parse("sample.md", sample)
	tabs := d.Tables()
	if len(tabs) != 1 {
		t.Fatalf("tables = %d, want 1: %+v", len(tabs), tabs)
	}
	tab := tabs[0]
	if tab.Column("Default") != 1 || len(tab.Rows) != 2 {
		t.Fatalf("table = %+v", tab)
	}
	if got := tab.Rows[0].Cells[2]; got != "one | two `x | y`" {
		t.Errorf("cell = %q", got)
	}
	if c, ok := Code(tab.Rows[1].Cells[1]); !ok || c != `""` {
		t.Errorf("code = %q %v", c, ok)
	}
	if _, ok := Code("none"); ok {
		t.Error("a cell without a code span has code")
	}
	var anchors []string
	for _, h := range d.Headings() {
		anchors = append(anchors, h.Anchor)
	}
	if want := []string{"title", "contents", "first-part", "cyan-memory-ls", "first-part-1"}; !slices.Equal(anchors, want) {
		t.Errorf("anchors = %q, want %q", anchors, want)
	}
	if errs := d.CheckTOC(3); len(errs) != 0 {
		t.Errorf("toc: %v", errs)
	}
}

func TestTOCFindsWhatIsMissingOrWrong(t *testing.T) {
	cases := []struct{ name, from, to, want string }{
		{"missing", "- [First part](#first-part-1)\n", "", "lack"},
		{"extra", "- [First part](#first-part-1)\n", "- [First part](#first-part-1)\n- [Gone](#gone)\n", "no heading"},
		{"wrong", "(#cyan-memory-ls)", "(#cyan-memory)", "but the heading there"},
		{"none", "## Contents", "## Index", "no table of contents"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Parse("s.md", strings.Replace(sample, c.from, c.to, 1))
			errs := d.CheckTOC(3)
			if len(errs) == 0 || !strings.Contains(errs[0].Error(), c.want) {
				t.Errorf("errors = %v, want one saying %q", errs, c.want)
			}
		})
	}
}

func TestBetweenAndReplace(t *testing.T) {
	d := Parse("s.md", sample)
	if txt, _, ok := d.Between("gen"); !ok || txt != "old" {
		t.Fatalf("between = %q %v", txt, ok)
	}
	out, err := d.Replace("gen", "new\nlines\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "<!-- begin gen -->\nnew\nlines\n<!-- end gen -->") {
		t.Errorf("replaced:\n%s", out)
	}
	if _, err := d.Replace("nope", "x"); err == nil {
		t.Error("missing markers accepted")
	}
}
