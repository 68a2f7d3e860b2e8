package notation

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExpandLast(t *testing.T) {
	said := map[string][]Quote{
		"kemo":      {{ID: "m1", Name: "kemo", Text: "first"}, {ID: "m2", Name: "kemo", Text: "I passed\nthe exam!"}},
		"Kemo Chan": {{ID: "m3", Name: "Kemo Chan", Text: "hi"}},
		"青蓝":        {{ID: "m4", Name: "青蓝", Text: "早呀"}},
	}
	lookup := func(name string, n int) []Quote {
		q := said[name]
		if n < len(q) {
			q = q[len(q)-n:]
		}
		return q
	}
	names := []string{"kemo", "Kemo Chan", "青蓝"}
	for _, tc := range []struct{ in, out, ids string }{
		{"no refs here", "no refs here", ""},
		{"@last_kemo congrats!", "「kemo: I passed the exam!」 congrats!", "m2"},
		{"as @last_2_kemo said", "as 「kemo: first / I passed the exam!」 said", "m1,m2"},
		{"@last_Kemo Chan waved", "「Kemo Chan: hi」 waved", "m3"},
		{"@last_KEMO!", "「kemo: I passed the exam!」!", "m2"},
		{"我刚说@last_青蓝了", "我刚说「青蓝: 早呀」了", "m4"},
		{"@last_bob is unknown", "bob is unknown", ""},
		{"@last_kemonade", "kemonade", ""},
		{"a lone @last_ marker", "a lone @last_ marker", ""},
	} {
		got, ids := ExpandLast(tc.in, names, lookup)
		if got != tc.out || strings.Join(ids, ",") != tc.ids {
			t.Errorf("ExpandLast(%q) = %q %v, want %q %s", tc.in, got, ids, tc.out, tc.ids)
		}
	}
}

func FuzzExpandLast(f *testing.F) {
	for _, s := range []string{"@last_kemo", "@last_3_a b", "@last_", "@last_0_x", "x@last_青蓝y", "@last_99999999999999999999_a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, ids := ExpandLast(s, []string{"a b", "kemo", "青蓝"}, func(name string, n int) []Quote {
			if n < 1 || n > 20 {
				t.Fatalf("n = %d out of 1–20", n)
			}
			return []Quote{{ID: fmt.Sprint(n), Name: name, Text: "said"}}
		})
		// A whole reference to a known name never survives unexpanded.
		for i := 0; ; {
			j := strings.Index(out[i:], LastPrefix+"kemo")
			if j < 0 {
				break
			}
			end := i + j + len(LastPrefix+"kemo")
			if r, _ := utf8.DecodeRuneInString(out[end:]); end == len(out) || !(r < utf8.RuneSelf && WordRune(r)) {
				t.Fatalf("%q → %q %v", s, out, ids)
			}
			i = end
		}
	})
}
