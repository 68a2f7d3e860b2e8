package events

import (
	"math"
	"testing"
	"unicode/utf8"
)

// The writer's answers are untrusted model output; their parsers must never
// panic and must keep every bound, whatever they are given.

var answerSeeds = []string{
	`{"title":"kemo asked me about RAG","importance":0.6,"includes":["a"]}`,
	"<think>hmm</think>```json\n{\"title\": \"x\", \"importance\": \"8\"}\n```",
	`Sure: {"title": "", "summary": "a day", "importance": 150}`,
	`{"facts":[{"object":"a","kind":"pet","text":"t"}],"lines":[{"a":"x","b":"X","text":"same"}],"reinforce":[1,"l2"],"contradict":null}`,
	`{{{"title":`,
	`{"title": "\u0000\ud800 bad", "importance": NaN}`,
	"",
}

func checkText(t *testing.T, s string, limit int) {
	t.Helper()
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > limit {
		t.Fatalf("text out of bounds (%d runes, valid %v): %q", utf8.RuneCountInString(s), utf8.ValidString(s), s)
	}
}

func checkScore(t *testing.T, f float64) {
	t.Helper()
	if math.IsNaN(f) || f < 0 || f > 1 {
		t.Fatalf("score %v out of [0, 1]", f)
	}
}

func FuzzParseTopicTitle(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := parseTopicTitle(s)
		if err != nil {
			return
		}
		if out.Title == "" || len(out.Includes) > maxListItems {
			t.Fatalf("accepted %+v", out)
		}
		checkText(t, out.Title, maxTitleRunes)
		checkScore(t, out.Importance)
	})
}

func FuzzParseSummary(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := parseSummary(s)
		if err != nil {
			return
		}
		if out.Title == "" {
			t.Fatal("accepted an empty summary")
		}
		checkText(t, out.Title, maxTitleRunes)
		checkScore(t, out.Importance)
	})
}

func FuzzParseExtraction(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := parseExtraction(s)
		if err != nil {
			return
		}
		if len(out.Facts) > maxListItems || len(out.Lines) > maxListItems || len(out.Reinforce) > maxListItems || len(out.Contradict) > maxListItems {
			t.Fatalf("lists over the bound: %+v", out)
		}
		for _, fa := range out.Facts {
			if fa.Object == "" || fa.Text == "" || (fa.Kind != KindPerson && fa.Kind != KindAgent && fa.Kind != KindThing) {
				t.Fatalf("fact %+v", fa)
			}
			checkText(t, fa.Object, maxNameRunes)
			checkText(t, fa.Text, maxFactRunes)
		}
		for _, l := range out.Lines {
			if l.A == "" || l.B == "" || l.Text == "" || normName(l.A) == normName(l.B) {
				t.Fatalf("line %+v", l)
			}
			checkText(t, l.Text, maxFactRunes)
			checkScore(t, l.Strength)
		}
	})
}
