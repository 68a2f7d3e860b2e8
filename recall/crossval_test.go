package recall

import (
	"fmt"
	"slices"
	"testing"
)

func TestFoldsNeverShareAConversation(t *testing.T) {
	for _, c := range []struct{ n, k int }{{5, 5}, {5, 2}, {10, 5}, {10, 3}, {7, 7}} {
		t.Run(fmt.Sprintf("%d conversations, %d folds", c.n, c.k), func(t *testing.T) {
			test, train, err := Folds(c.n, c.k)
			if err != nil {
				t.Fatal(err)
			}
			heldOut := map[int]int{}
			for f := range c.k {
				if len(test[f]) == 0 || len(train[f]) == 0 {
					t.Fatalf("fold %d: %d held out, %d to tune on", f, len(test[f]), len(train[f]))
				}
				for _, x := range test[f] {
					if slices.Contains(train[f], x) {
						t.Errorf("fold %d tunes on conversation %d, which it measures", f, x)
					}
					heldOut[x]++
				}
				if len(test[f])+len(train[f]) != c.n {
					t.Errorf("fold %d covers %d of %d conversations", f, len(test[f])+len(train[f]), c.n)
				}
			}
			for x := range c.n {
				if heldOut[x] != 1 {
					t.Errorf("conversation %d is held out %d times", x, heldOut[x])
				}
			}
		})
	}
	for _, bad := range []struct{ n, k int }{{5, 1}, {5, 6}, {1, 1}} {
		if _, _, err := Folds(bad.n, bad.k); err == nil {
			t.Errorf("Folds(%d, %d) accepted", bad.n, bad.k)
		}
	}
}

// spyScorer is a scorer over made-up conversations: on conversation
// "odd" the best value of every knob is its last, elsewhere its second;
// "odd" has ten questions, the others one each, so a tuning that saw it
// would follow it. It records which conversations it was asked about.
type spyScorer struct {
	n      int
	odd    int
	asked  map[int]bool
	traced bool
}

func (s *spyScorer) conversations() int { return s.n }

func (s *spyScorer) score(conv int, st setting) [][]float64 {
	if s.traced {
		s.asked[conv] = true
	}
	// Every question's recall is the share of knobs at the value this
	// conversation likes.
	good := 0
	for i, k := range knobs {
		want := 1
		if conv == s.odd {
			want = len(k.Values) - 1
		}
		if int(st[i]) == want {
			good++
		}
	}
	q := []float64{float64(good) / float64(len(knobs))}
	if conv == s.odd {
		return slices.Repeat([][]float64{q}, 10)
	}
	return [][]float64{q}
}

func TestTuningSeesOnlyTheTrainingConversations(t *testing.T) {
	var all knobSet
	for i := range all {
		all[i] = true
	}
	test, train, err := Folds(5, 5)
	if err != nil {
		t.Fatal(err)
	}
	for f := range 5 {
		sc := &spyScorer{n: 5, odd: test[f][0], asked: map[int]bool{}, traced: true}
		got := tune(sc, train[f], all, setting{})
		for c := range sc.asked {
			if !slices.Contains(train[f], c) {
				t.Errorf("fold %d: tuning looked at conversation %d, which the fold holds out", f, c)
			}
		}
		// The held-out conversation likes other values than the training
		// ones; tuning on the training ones must not find them.
		for i, k := range knobs {
			if int(got.setting[i]) == len(k.Values)-1 && len(k.Values) > 2 {
				t.Errorf("fold %d: knob %s took the held-out conversation's favourite", f, k.Name)
			}
		}
	}
	// crossValidate scores the held-out conversation with the training
	// choice: held out, the odd conversation is measured as unseen and
	// does worse than its own best (had it leaked into the tuning, its ten
	// questions would have won the choice and it would score 1).
	sc := &spyScorer{n: 5, odd: 2, asked: map[int]bool{}}
	folds, err := crossValidate(sc, 5, all, setting{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range folds {
		if slices.Contains(f.train, f.test[0]) {
			t.Fatalf("fold holding out %d tunes on it", f.test[0])
		}
		if r := f.scores[0][0][0]; f.test[0] == 2 && r == 1 {
			t.Errorf("the odd conversation scored %v held out: it leaked into its fold's tuning", r)
		}
	}
}
