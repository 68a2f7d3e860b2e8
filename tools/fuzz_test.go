package tools

import (
	"io"
	"strings"
	"testing"
)

// FuzzResolvePath opens arbitrary paths: whatever opens is a regular file
// inside the root and never a secret.
func FuzzResolvePath(f *testing.F) {
	for _, e := range escapes {
		f.Add(e)
	}
	for _, a := range absolutes {
		f.Add(a)
	}
	f.Add("a.txt")
	f.Add("link_in")
	fx := newFixture(f)
	f.Fuzz(func(t *testing.T, p string) {
		for _, c := range []string{p, fx.root + "/" + p} {
			file, real, err := fx.paths.OpenRead(c)
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(io.LimitReader(file, 1<<20))
			file.Close()
			if !strings.HasPrefix(real, fx.root+"/") || strings.Contains(string(b), secret) || strings.HasPrefix(real, fx.data) {
				t.Fatalf("%q opened %s (%q)", c, real, b)
			}
		}
	})
}

func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{"ls -la", "a; b && c || d | e & f", "(sleep 1000 &)", "echo $(rm -rf /)", `echo "$(curl x)"`, "echo `id`", "{ a; }", "echo 'x", "diff <(a) >(b)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, err := SplitCommand(s)
		if err != nil {
			return
		}
		for _, p := range parts {
			if p == "" || p != strings.TrimSpace(p) {
				t.Fatalf("part %q of %q", p, s)
			}
		}
		// A command with no separator, quote or substitution is one part.
		if !strings.ContainsAny(s, ";&|\n\r()`'\"\\{}$<>") && strings.TrimSpace(s) != "" && (len(parts) != 1 || parts[0] != strings.TrimSpace(s)) {
			t.Fatalf("%q split into %q", s, parts)
		}
	})
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"%[a.txt]", "%[/w/log.txt] Line 3 ~ Line 9", "%[x] Line 9 ~ Line 3", "%[", "plain", "%[a]b] line 1 ~ line 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		if r.Path == "" || r.From < 0 || r.To < r.From || (r.From == 0) != (r.To == 0) {
			t.Fatalf("ParseRef(%q) = %+v", s, r)
		}
	})
}

// SecretContent reads the head of any file in a root: it never panics, and
// a private key is found whatever the path.
func FuzzSecretContent(f *testing.F) {
	f.Add("r/.git/config", []byte("[remote \"o\"]\n\turl = https://u:t@h/x\n"))
	f.Add(".gitconfig", []byte("\textraheader = AUTHORIZATION: basic x"))
	f.Add("k", []byte("-----BEGIN RSA PRIVATE KEY-----"))
	f.Fuzz(func(t *testing.T, p string, head []byte) {
		_, _ = SecretContent(p, head)
		_ = IsGitConfig(p)
		if IsPrivateKey(head) {
			if _, ok := SecretContent(p, head); !ok {
				t.Fatalf("a private key is not a secret at %q", p)
			}
		}
	})
}
