package cmd

import (
	"bytes"
	"strings"
	"testing"
)

// What a terminal would not show as it is — controls, bidi controls,
// invisible format characters — is shown as its escape.
func TestShowable(t *testing.T) {
	cases := []struct{ in, want string }{
		{"ls -la", "ls -la"},
		{"晴 café", "晴 café"},
		{"rm -rf ~ #\u202e/tmp/x", `rm -rf ~ #\u202E/tmp/x`},
		{"a\u202ab\u202bc\u202cd\u202de", `a\u202Ab\u202Bc\u202Cd\u202De`},
		{"\u2066x\u2067y\u2068z\u2069", `\u2066x\u2067y\u2068z\u2069`},
		{"l\u200er\u200f\u061c", `l\u200Er\u200F\u061C`},
		{"zero\u200bwidth\ufeff", `zero\u200Bwidth\uFEFF`},
		{"esc \x1b[2J bell \x07 del \x7f", `esc \u001B[2J bell \u0007 del \u007F`},
		{"c1 \u0085 \u009b31m", `c1 \u0085 \u009B31m`},
		{"two\nlines\tand\r", `two\nlines\tand\r`},
		{"sep\u2028par\u2029", `sep\u2028par\u2029`},
	}
	for _, c := range cases {
		if got := showable(c.in); got != c.want {
			t.Errorf("showable(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// A card's name makes a folder name with no control or bidi character in
// it, so the folder reads as it is.
func TestFolderNameDropsHiddenCharacters(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Seraphina", "Seraphina"},
		{"evil\u202egnp.exe", "evilgnp.exe"},
		{"a\u2066b\u2069c\u200ed\u200f", "abcd"},
		{"x\x1b[31my\u0085", "x_31my"},
		{"a/b:c", "a_b_c"},
		{"\u202e\u200b", "persona"},
	}
	for _, c := range cases {
		if got := folderName(c.in); got != c.want {
			t.Errorf("folderName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// cyan approvals shows exactly what will run: a bidi control in the
// arguments of a waiting call is shown as its escape.
func TestApprovalsShowHiddenCharactersEscaped(t *testing.T) {
	env, _, _ := toolDaemon(t)
	var out, errb bytes.Buffer
	args := `{"why": "rm -rf ~ #` + "\u202e" + `txt.eman", "note": "` + "\u0085" + `"}`
	if code := Main([]string{"tool", "run", "touch", args}, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Env: env}); code == 0 {
		t.Fatalf("the call did not wait: %s %s", out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := Main([]string{"approvals", "ls"}, IO{Stdout: &out, Stderr: &errb, Env: env}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.ContainsAny(out.String(), "\u202e\u0085") || !strings.Contains(out.String(), `rm -rf ~ #\u202Etxt.eman`) || !strings.Contains(out.String(), `\u0085`) {
		t.Fatalf("the arguments are not shown escaped:\n%s", out.String())
	}
}
