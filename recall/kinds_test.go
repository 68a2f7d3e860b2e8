package recall

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

func TestClassPhrase(t *testing.T) {
	for _, c := range []struct {
		q    string
		want string
	}{
		{"What instruments does Melanie play?", "instrument"},
		{"Which European countries has Maria been to?", "european countri"},
		{"What kind of art does Caroline make?", "art"},
		{"What types of pottery have Melanie and her kids made?", "potteri"},
		{"what board games has Nate played", "board game"},
		{"When did Melanie paint a sunrise?", ""}, // asks for no class
		{"What did Caroline research?", ""},       // "what" then a function word
		{"", ""},
	} {
		if got := strings.Join(classPhrase(c.q), " "); got != c.want {
			t.Errorf("classPhrase(%q) = %q, want %q", c.q, got, c.want)
		}
	}
}

// TestKindsOfAClass: the kinds searched for are the members of the
// class in the question's sense, and a head of two words is used
// instead of its words alone.
func TestKindsOfAClass(t *testing.T) {
	ks, class := questionKinds("What instruments does Melanie play?", Tokenize("What instruments does Melanie play?"))
	if class != 1 {
		t.Errorf("the class is named by %d words, want 1", class)
	}
	for _, want := range []string{stem("violin"), stem("guitar"), stem("piano")} {
		if !slices.Contains(ks, want) {
			t.Errorf("kinds of instruments: %v, want %q among them", ks, want)
		}
	}
	for _, legal := range []string{stem("treaty"), stem("contract")} {
		if slices.Contains(ks, legal) {
			t.Errorf("kinds of instruments played: %v hold the legal sense's %q", ks, legal)
		}
	}
	if len(ks) > maxKinds {
		t.Errorf("%d kinds, more than %d", len(ks), maxKinds)
	}
	eu, _ := questionKinds("Which European countries has Maria been to?", Tokenize("Which European countries has Maria been to?"))
	if !slices.Contains(eu, stem("spain")) || slices.Contains(eu, stem("japan")) {
		t.Errorf("kinds of european countries: %v, want spain and not japan", eu)
	}
	if ks, _ := questionKinds("When did Melanie play the violin?", nil); ks != nil {
		t.Errorf("a question that asks for no class: kinds %v", ks)
	}
}

func TestReadKindsTable(t *testing.T) {
	if _, err := readKindsTable(kindsTableGz, strings.Repeat("0", 64)); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a table that does not match its checksum: %v", err)
	}
	kt, err := kindsOnce()
	if err != nil {
		t.Fatal(err)
	}
	if len(kt.heads) < 5000 {
		t.Errorf("%d heads, want the compiled-in table's thousands", len(kt.heads))
	}
}

// TestKindsFindTheMembersOfTheClassAsked: "What instruments does Ann
// play?" finds "practising my violin", which shares no word with it,
// with the kinds search and not without it.
func TestKindsFindTheMembersOfTheClassAsked(t *testing.T) {
	x, st := newTestIndex(t, Options{VectorWeight: hybridOff})
	lines := []struct{ user, text string }{
		{"ann", "I spent the evening practising my violin"},
		{"bob", "my brother plays in a football team"},
		{"ann", "we play cards every friday night"},
		{"bob", "did you sign the rental contract yet"},
	}
	var msgs []*store.Message
	for i := range 40 {
		// Filler the question's words match, to push the answer past
		// the first few results.
		lines = append(lines, struct{ user, text string }{"bob", fmt.Sprintf("ann, do you play %d games of chance?", i)})
	}
	for i, l := range lines {
		msgs = append(msgs, &store.Message{Channel: "c", Role: store.RoleUser, User: l.user, Text: l.text,
			Time: t0.Add(time.Duration(i) * time.Minute), ExternalID: fmt.Sprintf("m%d", i)})
	}
	if _, err := st.Import(msgs); err != nil {
		t.Fatal(err)
	}
	syncIndex(t, x)
	rankOf := func() int {
		t.Helper()
		turns, err := x.rankedTurns(context.Background(), "What instruments does Ann play?", "c", 10)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Index(turns, "m0")
	}
	x.p.kinds = defaultParams.kinds
	if x.p.kinds == 0 {
		t.Fatal("the kinds search is off by default")
	}
	with := rankOf()
	// Shown, too: a member of the class has the share of the question
	// its class holds, not the floor.
	r, err := x.Search(context.Background(), Query{Prompt: "What instruments does Ann play?", Channel: "c", MaxResults: 10})
	if err != nil {
		t.Fatal(err)
	}
	shown := false
	for _, res := range r.Results {
		if slices.Contains(res.ExternalIDs, "m0") {
			shown = res.Score >= 20
		}
	}
	if !shown {
		t.Errorf("the violin line is not among the results with a score of at least 20: %+v", r.Results)
	}
	x.p.kinds = 0
	without := rankOf()
	if with < 0 || with > 2 {
		t.Errorf("with the kinds search the violin line ranks %d, want among the first 3", with)
	}
	if without >= 0 && without <= with {
		t.Errorf("without the kinds search it ranks %d, with %d: the test does not test it", without, with)
	}
}
