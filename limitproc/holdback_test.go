package limitproc

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/config"
)

// written feeds s to a fresh holdback in pieces of n bytes and returns
// what it released.
func written(t *testing.T, cfg config.Limits, s string, n int) (string, *Holdback) {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := c.Holdback()
	var out strings.Builder
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++ // a provider's fragments are whole runes
		}
		out.WriteString(h.Write(s[:k]))
		s = s[k:]
	}
	out.WriteString(h.End())
	return out.String(), h
}

// TestHoldbackReleasesNothingOfASecret: however the text is cut, no piece
// of a forbidden match goes out, and the result is the one the whole text
// gives.
func TestHoldbackReleasesNothingOfASecret(t *testing.T) {
	cfg := config.Limits{Forbidden: []string{`sk-[A-Za-z0-9]{8,}`, `password: \w{4}`}}
	text := "key sk-AbCdEf0123456789 and password: abcd, done"
	want := "key [removed] and [removed], done"
	for n := 1; n <= len(text); n++ {
		got, h := written(t, cfg, text, n)
		if got != want {
			t.Fatalf("pieces of %d: %q, want %q", n, got, want)
		}
		if ns := h.Notices(); len(ns) != 1 || ns[0].Stage != "forbidden" {
			t.Fatalf("notices %+v", ns)
		}
	}
}

// TestHoldbackCapsWhereTheStoredCopyIsCut: max_output_chars ends the
// text at the limit, "…" its last rune, across messages.
func TestHoldbackCapsWhereTheStoredCopyIsCut(t *testing.T) {
	c, err := New(config.Limits{MaxOutputChars: 10, Forbidden: []string{"x+"}})
	if err != nil {
		t.Fatal(err)
	}
	h := c.Holdback()
	first := h.Write("abcd") + h.End()
	second := h.Write(strings.Repeat("again ", 1000)) + h.End()
	if first != "abcd" || second != "again…" || !h.Capped() {
		t.Fatalf("%q %q", first, second)
	}
	if ns := h.Notices(); len(ns) != 1 || !strings.Contains(ns[0].Text, "6004 characters") {
		t.Fatalf("%+v", ns)
	}
}

func TestMaxMatch(t *testing.T) {
	for p, want := range map[string]int{"abc": 3, "a{2,5}": 5, "(ab|cde)f?": 4, `\bkey\b`: 3, "a+": -1, "sk-.*": -1} {
		n, ok := maxMatch(p)
		if !ok {
			n = -1
		}
		if n != want {
			t.Errorf("maxMatch(%q) = %d, want %d", p, n, want)
		}
	}
}

// FuzzHoldback: the released text never holds a match, and does not
// depend on how the text was cut.
func FuzzHoldback(f *testing.F) {
	f.Add("key sk-abcdefgh1 end", uint8(3))
	f.Add("sksksk-aaaaaaaa", uint8(1))
	f.Fuzz(func(t *testing.T, s string, n uint8) {
		if !utf8.ValidString(s) {
			return // a provider's text is decoded JSON
		}
		cfg := config.Limits{Forbidden: []string{`sk-[a-z0-9]{8,}`}, MaxOutputChars: 50}
		whole, _ := written(t, cfg, s, len(s)+1)
		cut, _ := written(t, cfg, s, int(n%16)+1)
		if whole != cut {
			t.Fatalf("whole %q, in pieces %q", whole, cut)
		}
		c, _ := New(cfg)
		if stored, _ := c.Output(Turn{}, []string{s}); strings.Join(stored, "") != cut {
			t.Fatalf("streamed %q, stored %q", cut, stored)
		}
		if regexp.MustCompile(`sk-[a-z0-9]{8,}`).MatchString(cut) {
			t.Fatalf("%q went out with a forbidden match", cut)
		}
	})
}

// TestHoldbackCutsAsTheStoredCopy: at the character limit the stream
// shows what Output gives the stored copy, however the text is cut: a
// text of exactly the limit whole, one rune more cut to the limit with
// "…" — the stream must not have shown the limit's last rune already.
func TestHoldbackCutsAsTheStoredCopy(t *testing.T) {
	cfg := config.Limits{MaxOutputChars: 10}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, parts := range [][]string{
		{"0123456789"}, {"0123456789a"}, {"012345678"}, {"0123456789abcdef"},
		{"01234", "56789"}, {"01234", "56789", "x"}, {"0123456789", "more"}, {"éééééééééé"}, {"ééééééééééé"},
	} {
		want, _ := c.Output(Turn{}, slices.Clone(parts))
		for n := 1; n <= 12; n++ {
			h := c.Holdback()
			var got []string
			for _, p := range parts {
				var out strings.Builder
				for len(p) > 0 {
					k := min(n, len(p))
					for k < len(p) && !utf8.RuneStart(p[k]) {
						k++
					}
					out.WriteString(h.Write(p[:k]))
					p = p[k:]
				}
				out.WriteString(h.End())
				if out.Len() > 0 {
					got = append(got, out.String())
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%q in pieces of %d: streamed %q, stored %q", parts, n, got, want)
			}
		}
	}
}
