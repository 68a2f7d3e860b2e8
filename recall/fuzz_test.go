package recall

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTokenize: any text (it comes from users and imports) tokenizes
// without panicking into valid, non-empty, lower-case terms, and the
// built-in embedder gives a unit vector or zero.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "Hello, World!", "我不理解啊，这么多知识点", "明日は試験です", "de-stress e-mail", "ＡＢＣ１２３", "it's caroline's", "\xff\xfe", "a-", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, term := range Tokenize(s) {
			if term == "" || !utf8.ValidString(term) && utf8.ValidString(s) {
				t.Fatalf("bad term %q from %q", term, s)
			}
			if strings.ToLower(term) != term && utf8.ValidString(term) {
				t.Fatalf("term %q is not lower-case", term)
			}
		}
		v := HashEmbedder{Dims: 32}.Vector(s)
		if n := dot(v, v); n != 0 && (n < 0.999 || n > 1.001) {
			t.Fatalf("|v|² = %v", n)
		}
	})
}
