package mainvirtual

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/turn"
)

// fixed is a source that takes tokens of the budget it is given (one
// word a token) and records what it was given.
type fixed struct {
	words int
	got   *int
	err   error
	note  string
}

func (f fixed) Section(_ context.Context, _ turn.Query, budget int, _ func(string) int) (turn.Section, error) {
	*f.got = budget
	if f.err != nil {
		return turn.Section{}, f.err
	}
	n := min(f.words, budget)
	return turn.Section{Body: strings.TrimSpace(strings.Repeat("w ", n)), Items: []packets.SectionItem{{ID: f.note, Tokens: n, Included: n > 0}}, Note: f.note}, nil
}

func TestStackGivesEachSourceWhatTheOnesBeforeLeft(t *testing.T) {
	count := func(s string) int { return len(strings.Fields(s)) }
	var a, b, c int
	s := Stack(fixed{words: 4, got: &a, note: "first"}, fixed{words: 100, got: &b, note: "second"}, fixed{got: &c, note: "third"})
	sec, err := s.Section(context.Background(), turn.Query{}, 20, count)
	if err != nil {
		t.Fatal(err)
	}
	// 4 words and a newline taken by the first: 15 left; the second takes them all.
	if a != 20 || b != 15 || c != 0 {
		t.Fatalf("budgets given: %d %d %d, want 20 15 0", a, b, c)
	}
	if got := count(sec.Body); got != 19 || strings.Count(sec.Body, "\n") != 1 {
		t.Fatalf("body %q", sec.Body)
	}
	if sec.Note != "first; second; third" || len(sec.Items) != 3 {
		t.Fatalf("note %q items %+v", sec.Note, sec.Items)
	}

	// A failing source is left out and noted; the others still fill the slot.
	s = Stack(fixed{got: &a, err: errors.New("index down")}, fixed{words: 3, got: &b, note: "pulled"})
	sec, err = s.Section(context.Background(), turn.Query{}, 20, count)
	if err != nil || sec.Body != "w w w" || b != 20 || !strings.Contains(sec.Note, "left out: index down") {
		t.Fatalf("with one failing: %q %q %v (second given %d)", sec.Body, sec.Note, err, b)
	}
	// Only when every source fails does the slot fail.
	s = Stack(fixed{got: &a, err: errors.New("index down")})
	if _, err := s.Section(context.Background(), turn.Query{}, 20, count); err == nil {
		t.Fatal("a stack of failing sources filled its slot")
	}
}
