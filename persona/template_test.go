package persona

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		src  string
		vars map[string]any
		want string
	}{
		{name: "plain text", src: "hello", want: "hello"},
		{name: "variable", src: "hi ${who}!", vars: map[string]any{"who": "Ann"}, want: "hi Ann!"},
		{name: "variable with blanks", src: "${ who }", vars: map[string]any{"who": "Ann"}, want: "Ann"},
		{name: "unicode name", src: "${名字}", vars: map[string]any{"名字": "青蓝"}, want: "青蓝"},
		{name: "default used", src: "${x = fall back }.", want: "fall back."},
		{name: "default unused", src: "${x = d}", vars: map[string]any{"x": "v"}, want: "v"},
		{name: "default for null", src: "${x = d}", vars: map[string]any{"x": nil}, want: "d"},
		{name: "null without default", src: "[${x}]", vars: map[string]any{"x": nil}, want: "[]"},
		{name: "empty default", src: "[${x =}]", want: "[]"},
		{name: "escaped brace in default", src: `${x = a\}b}`, want: "a}b"},
		{name: "int", src: "${n}", vars: map[string]any{"n": 40}, want: "40"},
		{name: "float", src: "${n}", vars: map[string]any{"n": 0.5}, want: "0.5"},
		{name: "bool", src: "${b}", vars: map[string]any{"b": true}, want: "true"},
		{name: "list", src: "${l}", vars: map[string]any{"l": []any{"txt", "md", 3}}, want: "txt, md, 3"},
		{name: "string list", src: "${l}", vars: map[string]any{"l": []string{"a", "b"}}, want: "a, b"},
		{name: "int list", src: "${l}", vars: map[string]any{"l": []int{1, 2}}, want: "1, 2"},
		{name: "condition true", src: "${a ? yes : no}", vars: map[string]any{"a": true}, want: "yes"},
		{name: "condition false", src: "${a ? yes : no}", want: "no"},
		{name: "condition without else", src: "[${a ? yes}]", want: "[]"},
		{name: "negated", src: "${!a ? off : on}", vars: map[string]any{"a": "yes"}, want: "on"},
		{name: "negated unset", src: "${ ! a ? off : on}", want: "off"},
		{name: "variable in branch", src: "${a ? hi ${who} : bye}", vars: map[string]any{"a": 1, "who": "Bo"}, want: "hi Bo"},
		{name: "nested condition", src: "${a ? <${b ? B : b}> : x}", vars: map[string]any{"a": true}, want: "<b>"},
		{name: "nested in else", src: "${a ? x : ${b ? B : ${c ? C : none}}}", vars: map[string]any{"c": "on"}, want: "C"},
		{name: "first colon separates", src: "${a ? x:y:z}", want: "y:z"},
		{name: "colon in nested default is not a separator", src: "${a ? ${t = 10:30} : no}", vars: map[string]any{"a": true}, want: "10:30"},
		{name: "colon in nested condition is not a separator", src: "${a ? ${b ? 1 : 2} : 3}", vars: map[string]any{"a": true}, want: "2"},
		{
			name: "line with only a colon separates",
			src:  "${a ?\n    Note: one\n    :\n    Note: two\n}",
			vars: map[string]any{"a": true},
			want: "Note: one",
		},
		{
			name: "line with only a colon separates, else",
			src:  "${a ?\n    Note: one\n\t :  \n    Note: two\n}",
			want: "Note: two",
		},
		{name: "escaped colon", src: `${a ? at 10\:30 : never}`, vars: map[string]any{"a": true}, want: "at 10:30"},
		{name: "escaped brace in branch", src: `${a ? {x\} : y}`, vars: map[string]any{"a": true}, want: "{x}"},
		{name: "escaped dollar", src: `cost \${x}`, want: "cost ${x}"},
		{name: "escaped dollar in branch", src: `${a ? \${b\} : c}`, vars: map[string]any{"a": true}, want: "${b}"},
		{name: "stray brace is text", src: `{"a": 1}}`, want: `{"a": 1}}`},
		{name: "backslash is text", src: `C:\temp\x \: \}`, want: `C:\temp\x \: \}`},
		{name: "dollar alone is text", src: "$5 and $", want: "$5 and $"},
		{name: "crlf", src: "a\r\n${a ? b}\r\nc", vars: map[string]any{"a": true}, want: "a\nb\nc"},
		{
			name: "dedent and re-indent",
			src:  "list:\n    ${a ?\n        one\n          two\n\n        three\n    }\nend",
			vars: map[string]any{"a": true},
			want: "list:\n    one\n      two\n\n    three\nend",
		},
		{
			name: "first line keeps extra indentation",
			src:  "${a ?\n        one\n    two\n}",
			vars: map[string]any{"a": true},
			want: "    one\ntwo",
		},
		{
			name: "nested multi-line conditions",
			src:  "  ${a ?\n      outer\n        ${b ?\n            in1\n            in2\n        }\n  }\nend",
			vars: map[string]any{"a": true, "b": true},
			want: "  outer\n    in1\n    in2\nend",
		},
		{name: "standalone empty leaves no line", src: "a\n  ${x ? X}\nb", want: "a\nb"},
		{name: "standalone full", src: "a\n${x ? X}\nb", vars: map[string]any{"x": true}, want: "a\nX\nb"},
		{name: "standalone at start", src: "${x ? X}\nb", want: "b"},
		{name: "standalone at end", src: "a\n${x ? X}", want: "a\n"},
		{name: "inline empty keeps line", src: "a ${x ? X}\nb", want: "a \nb"},
		{name: "multi-line value re-indented", src: "  - ${v}\nend", vars: map[string]any{"v": "a\nb\n\nc"}, want: "  - a\n  b\n\n  c\nend"},
		{name: "empty branches", src: "[${a ? : }]", want: "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Parse("t.md", tt.src)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := tmpl.Render(tt.vars)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestTruthy(t *testing.T) {
	falsy := []any{nil, false, "", "  ", "false", "FALSE", "no", " No ", "off", "0", 0, int64(0), 0.0, uint(0), []any{}, []string{}, map[string]any{}}
	truthful := []any{true, "yes", "x", "true", "00", 1, -1, 0.1, []any{0}, map[string]any{"a": 1}}
	for _, v := range falsy {
		if truthy(v) {
			t.Errorf("truthy(%#v) = true, want false", v)
		}
	}
	for _, v := range truthful {
		if !truthy(v) {
			t.Errorf("truthy(%#v) = false, want true", v)
		}
	}
}

func TestErrors(t *testing.T) {
	deep := strings.Repeat("${a ? ", maxDepth+1) + strings.Repeat("}", maxDepth+1)
	tests := []struct {
		name string
		src  string
		vars map[string]any
		want string // the whole message, or its start when it ends in "…"
	}{
		{name: "unterminated", src: "ab\n  ${x", want: "t.md:2:3: unterminated ${: missing }"},
		{name: "unterminated after blanks", src: "${  ", want: "t.md:1:1: unterminated ${: missing }"},
		{name: "unterminated condition", src: "x ${a ? b : c", want: "t.md:1:3: unterminated ${: missing }"},
		{name: "unterminated inner", src: "${a ? x\n  ${b ? y", want: "t.md:2:3: unterminated ${: missing }"},
		{name: "unterminated default", src: "${a = b", want: "t.md:1:1: unterminated ${: missing }"},
		{name: "empty", src: "x ${ }", want: "t.md:1:3: empty expression ${}"},
		{name: "bad name", src: "${1abc}", want: `t.md:1:1: bad name "1abc": …`},
		{name: "columns count runes", src: "青蓝 ${-x}", want: `t.md:1:4: bad name "-x": …`},
		{name: "missing name", src: "${!}", want: "t.md:1:1: missing name after ${"},
		{name: "negated variable", src: "${!a}", want: "t.md:1:1: ! only goes before the name of a conditional: …"},
		{name: "junk after name", src: "\n\n   ${a b}", want: `t.md:3:4: unexpected 'b' after "a": …`},
		{name: "unknown function", src: "${load(x)}", want: `t.md:1:1: unknown function "load": …`},
		{name: "file_load without path", src: "${file_load()}", want: "t.md:1:1: file_load needs a path: …"},
		{name: "file_load blank path", src: "${file_load( '' )}", want: "t.md:1:1: file_load needs a path: …"},
		{name: "file_load missing paren", src: "${file_load(a.txt}", want: "t.md:1:1: file_load: missing ) after the path"},
		{name: "file_load junk", src: "${file_load(a.txt) x}", want: `t.md:1:1: unexpected 'x' after file_load(a.txt): want }`},
		{name: "file_load absolute", src: "${file_load(/etc/passwd)}", want: `t.md:1:1: file_load refused: path "/etc/passwd" is absolute: …`},
		{name: "file_load parent", src: "a\n ${file_load(../x)}", want: `t.md:2:2: file_load refused: path "../x" leaves the persona folder`},
		{name: "file_load parent inside", src: "${file_load(a/../../x)}", want: `t.md:1:1: file_load refused: path "a/../../x" leaves the persona folder`},
		{name: "file_load backslash", src: `${file_load(a\b)}`, want: `t.md:1:1: file_load refused: path "a\\b": use / between folder names`},
		{name: "file_load dot", src: "${file_load(.)}", want: `t.md:1:1: file_load refused: path "." does not name a file`},
		{name: "too deep", src: deep, want: fmt.Sprintf("t.md:1:%d: conditionals nested more than %d deep", 1+6*maxDepth, maxDepth)},
		{name: "unknown variable", src: "line\n  ${who}", want: `t.md:2:3: unknown variable "who": set it or give a default, ${who = …}`},
		{name: "unknown variable in branch", src: "${a ?\n  x ${y}\n}", vars: map[string]any{"a": true}, want: `t.md:2:5: unknown variable "y": …`},
		{name: "unknown variable in untaken branch", src: "${a ? ${y} : ok}z${q}", want: `t.md:1:18: unknown variable "q": …`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Parse("t.md", tt.src)
			if err == nil {
				_, err = tmpl.Render(tt.vars)
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			if !matches(err.Error(), tt.want) {
				t.Errorf("error\n got  %q\n want %q", err, tt.want)
			}
		})
	}
}

// matches reports whether got is want, or starts with want less a final "…".
func matches(got, want string) bool {
	if prefix, ok := strings.CutSuffix(want, "…"); ok {
		return strings.HasPrefix(got, prefix)
	}
	return got == want
}

func TestFileLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"a.txt":       {Data: []byte("line1\nline2\n")},
		"raw.txt":     {Data: []byte("${not_a_var} ${a ? b}")},
		"sub/b.md":    {Data: []byte("B")},
		"crlf.txt":    {Data: []byte("x\r\ny\r\n")},
		"folder/x.md": {Data: []byte("x")},
	}
	tests := []struct {
		name string
		src  string
		want string
	}{
		{name: "indented", src: "x\n  ${file_load(a.txt)}\ny", want: "x\n  line1\n  line2\ny"},
		{name: "not evaluated", src: "${file_load(raw.txt)}", want: "${not_a_var} ${a ? b}"},
		{name: "quoted and cleaned", src: `${file_load("./sub/../sub/b.md")}`, want: "B"},
		{name: "in a branch", src: "${a ? ${ file_load( 'sub/b.md' ) } : no}", want: "B"},
		{name: "crlf", src: "${file_load(crlf.txt)}", want: "x\ny"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Parse("t.md", tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if err := tmpl.ReadFiles(fsys); err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.Render(map[string]any{"a": true})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		tmpl, err := Parse("t.md", "\n  ${file_load(nope.txt)}")
		if err != nil {
			t.Fatal(err)
		}
		err = tmpl.ReadFiles(fsys)
		if !matches(fmt.Sprint(err), "t.md:2:3: file_load(nope.txt): …") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("folder", func(t *testing.T) {
		tmpl, _ := Parse("t.md", "${file_load(folder)}")
		if err := tmpl.ReadFiles(fsys); !matches(fmt.Sprint(err), "t.md:1:1: file_load(folder): …") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("render before ReadFiles", func(t *testing.T) {
		tmpl, _ := Parse("t.md", "${file_load(a.txt)}")
		if _, err := tmpl.Render(nil); !matches(fmt.Sprint(err), "t.md:1:1: file_load(a.txt): the file was not read …") {
			t.Errorf("got %v", err)
		}
	})
}

// TestFileLoadRoot reads through an os.Root, which must refuse symbolic
// links that lead out of the folder.
func TestFileLoadRoot(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "persona")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "in.txt"), "inside")
	write(t, filepath.Join(outside, "secret.txt"), "secret")
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(dir, "out.txt"))
	symlink(t, outside, filepath.Join(dir, "outdir"))
	symlink(t, "in.txt", filepath.Join(dir, "alias.txt"))

	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()

	tests := []struct {
		name    string
		src     string
		want    string
		wantErr string
	}{
		{name: "plain", src: "${file_load(in.txt)}", want: "inside"},
		{name: "link inside", src: "${file_load(alias.txt)}", want: "inside"},
		{name: "link to a file outside", src: "x ${file_load(out.txt)}", wantErr: "t.md:1:3: file_load(out.txt): …"},
		{name: "link to a folder outside", src: "${file_load(outdir/secret.txt)}", wantErr: "t.md:1:1: file_load(outdir/secret.txt): …"},
		{name: "parent", src: "${file_load(../outside/secret.txt)}", wantErr: "t.md:1:1: file_load refused: …"},
		{name: "absolute", src: "${file_load(" + filepath.ToSlash(filepath.Join(outside, "secret.txt")) + ")}", wantErr: "t.md:1:1: file_load refused: …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Parse("t.md", tt.src)
			if err == nil {
				err = tmpl.ReadFiles(root.FS())
			}
			if tt.wantErr != "" {
				if err == nil || !matches(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret\n") {
					t.Errorf("error leaks the file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.Render(nil)
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
}
