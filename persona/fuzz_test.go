package persona

import (
	"errors"
	"hash/fnv"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"plain text with } and { and $",
		"${a}${b = x}${!c ? y : z}",
		"${a ?\n    Note: x\n    :\n    y\n}",
		"${a ? ${b ? 1 : 2} : ${c = 3}}",
		`\${a} ${a ? \: \} \${ : b}`,
		"${file_load(a.txt)} ${file_load(../x)}",
		"  ${a ?\n      x\n        ${b ?\n y\n}\n  }",
		"青蓝 ${名字 ? 你好}",
	} {
		f.Add(s)
	}
	fsys := fstest.MapFS{
		"a.txt":   {Data: []byte("A\n  B\n")},
		"b/c.txt": {Data: []byte("${x}")},
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := Parse("f.md", src)
		if err != nil {
			checkPosition(t, src, err)
			return
		}
		if tmpl == nil {
			t.Fatal("Parse returned neither a template nor an error")
		}
		if err := tmpl.ReadFiles(fsys); err != nil {
			checkPosition(t, src, err)
		}
		for _, vars := range []map[string]any{nil, {}, fuzzVars(src)} {
			if _, err := tmpl.Render(vars); err != nil {
				checkPosition(t, src, err)
			}
		}
	})
}

// checkPosition fails unless err is an *Error at a place inside src.
func checkPosition(t *testing.T, src string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T is not an *Error: %v", err, err)
	}
	lines := strings.Split(src, "\n")
	if e.File != "f.md" || e.Line < 1 || e.Line > len(lines) {
		t.Fatalf("error outside the input (%d lines): %v", len(lines), err)
	}
	if n := utf8.RuneCountInString(lines[e.Line-1]); e.Col < 1 || e.Col > n+1 {
		t.Fatalf("error column outside line %d (%d runes): %v", e.Line, n, err)
	}
}

// fuzzVars gives every name-like word of src a value of some kind.
func fuzzVars(src string) map[string]any {
	values := []any{"", "no", "x\n y\n", 0, 1.5, true, false, []any{"p", 2}, nil}
	vars := map[string]any{}
	for _, w := range strings.FieldsFunc(src, func(r rune) bool { return !isIdent(string(r)) && (r < '0' || r > '9') }) {
		if isIdent(w) {
			h := fnv.New32a()
			h.Write([]byte(w))
			vars[w] = values[h.Sum32()%uint32(len(values))]
		}
	}
	return vars
}
