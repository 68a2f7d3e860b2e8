package recall

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/packets"
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

// FuzzSplitRecord: any record text (a theory article the model wrote, an
// event title) splits into parts that keep every non-blank line once, in
// order, with locations that count the lines.
func FuzzSplitRecord(f *testing.F) {
	for _, s := range []string{"", "one line", strings.Repeat("a line of text\n", 120), strings.Repeat("x", 3000) + "\nshort", "\n\n\n", "理论\n第二行\r\n第三行"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := packets.Record{Source: "theory t", Text: s}
		parts := splitRecord(&r)
		if strings.TrimSpace(s) == "" {
			if len(parts) != 0 {
				t.Fatalf("%d parts of a blank text", len(parts))
			}
			return
		}
		var got []string
		for _, p := range parts {
			if strings.TrimSpace(p.text) == "" {
				t.Fatalf("a blank part at %q", p.loc)
			}
			if len(parts) > 1 && !strings.HasPrefix(p.loc, "line ") {
				t.Fatalf("part without a line location: %q", p.loc)
			}
			for _, l := range strings.Split(p.text, "\n") {
				if strings.TrimSpace(l) != "" {
					got = append(got, strings.TrimSpace(l))
				}
			}
		}
		var want []string
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			if strings.TrimSpace(l) != "" {
				want = append(want, strings.TrimSpace(l))
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("parts keep %d lines of %d", len(got), len(want))
		}
	})
}

func FuzzQuestionDates(f *testing.F) {
	for _, s := range []string{"What movie did Joanna watch on 1 May, 2022?", "Where did she travel in July 2022?",
		"When did Caroline go to the support group?", "what happened in summer 2021", "2023-05-08", "May 32, 2022",
		"2024年3月5日发生了什么", "去年的考试是什么时候？", "いつ試験がありますか", "the 31st of February, 2023", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		from, to, ok := questionDates(q)
		if ok && !from.Before(to) {
			t.Fatalf("%q: span %v – %v is empty", q, from, to)
		}
		_ = whenQuestion(q)
		_ = statesTime(q)
	})
}

// FuzzParseHistoryRef reads the model's history references: never a
// panic, and what it accepts is a range that opens.
func FuzzParseHistoryRef(f *testing.F) {
	for _, s := range [][2]string{
		{"history/home/2026-11-23", "message 4 ~ message 9"},
		{"history/qq:group:1/2026-11-23", "message 1"},
		{"history//x", "message 0"},
		{"history/a/b/c", "Message 3～message 2"},
		{"history/home/2026-11-23", "message 1 ~ message 999999999"},
		{"theory x", ""},
	} {
		f.Add(s[0], s[1])
	}
	r := packets.Reader{Channel: "home", Owner: true, Private: true, Perm: &packets.Permission{Infos: []string{"**"}}}
	f.Fuzz(func(t *testing.T, ref, location string) {
		channel, from, to, err := parseHistoryRef(r, ref, location)
		if err == nil && (channel == "" || from < 1 || to < from || to-from >= maxOpen) {
			t.Fatalf("accepted %q %q as %q %d ~ %d", ref, location, channel, from, to)
		}
	})
}

// FuzzQuestionKinds: any question (it comes from users and models) gives
// a bounded list of kinds, never a panic.
func FuzzQuestionKinds(f *testing.F) {
	for _, s := range []string{"What instruments does Melanie play?", "which european countries", "what kind of", "WHAT", "what é 汉字 instruments"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if ks, _ := questionKinds(q, Tokenize(q)); len(ks) > maxKinds {
			t.Fatalf("%d kinds", len(ks))
		}
	})
}
