package recall

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// An irregular verb's past form is indexed as its base form, so a
// question in "did … buy" finds "bought"; a form that is more often
// another word is left alone, and one whose base is a stop word is
// dropped like it.
func TestTokenizeTakesIrregularPastsToTheirBase(t *testing.T) {
	for _, c := range []struct{ past, base string }{
		{"went", "go"}, {"bought", "buy"}, {"drew", "draw"}, {"ran", "run"}, {"taught", "teach"}, {"won", "win"},
	} {
		if got, want := Tokenize(c.past), Tokenize(c.base); !slices.Equal(got, want) {
			t.Errorf("Tokenize(%q) = %q, want %q as Tokenize(%q)", c.past, got, want, c.base)
		}
	}
	if got := Tokenize("done"); len(got) != 0 {
		t.Errorf("Tokenize(done) = %q: its base is a stop word", got)
	}
	for _, w := range []string{"left", "saw", "found", "ground", "rose"} {
		if got := Tokenize(w); !slices.Equal(got, []string{stem(w)}) {
			t.Errorf("Tokenize(%q) = %q: an ambiguous form was taken to a verb", w, got)
		}
	}
}

// For a question that asks in a verb's base form, the line that says it
// in the verb's irregular past ranks before one that shares only the
// question's noun.
func TestAQuestionInTheBaseFormFindsTheIrregularPast(t *testing.T) {
	x, st := newTestIndex(t, Options{VectorWeight: hybridOff})
	lines := []string{
		"that lamp, the lamp in the shop window: what a lamp",
		"nice weather today",
		"we should buy groceries on the way home",
		"nice weather today",
		"I bought a lamp for the reading corner",
	}
	var msgs []*store.Message
	for i, l := range lines {
		msgs = append(msgs, &store.Message{Channel: "c", Role: store.RoleUser, User: "ann", Text: l,
			Time: t0.Add(time.Duration(i) * time.Hour), ExternalID: fmt.Sprintf("m%d", i)})
	}
	if _, err := st.Import(msgs); err != nil {
		t.Fatal(err)
	}
	syncIndex(t, x)
	turns, err := x.rankedTurns(context.Background(), "What lamp did Ann buy?", "c", 10)
	if err != nil {
		t.Fatal(err)
	}
	if bought, seen := slices.Index(turns, "m4"), slices.Index(turns, "m0"); bought < 0 || seen >= 0 && seen < bought {
		t.Errorf("ranked %q, want the line that bought the lamp (m4) before the one that only saw one (m0)", turns)
	}
}
