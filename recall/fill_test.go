package recall

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// TestFillBringsTheMatchingSessionsOtherLines: a question's answer that
// shares no word with it is found through the session of a line that
// does, after that line, and a session without a match lends nothing.
func TestFillBringsTheMatchingSessionsOtherLines(t *testing.T) {
	x, st := newTestIndex(t, Options{VectorWeight: hybridOff})
	lines := []struct {
		user, text string
		day        int
	}{
		{"alice", "we hiked the ridge trail on saturday", 0}, // s0: the match
		{"bob", "what was the view from the top like", 0},
		{"alice", "gorgeous, we could see three lakes", 0}, // s2: the answer
		{"bob", "did anyone see the exam schedule", 5},     // another session
		{"alice", "it is posted on the notice board", 5},
	}
	var msgs []*store.Message
	for i, l := range lines {
		msgs = append(msgs, &store.Message{Channel: "walks", Role: store.RoleUser, User: l.user, Text: l.text,
			Time: t0.AddDate(0, 0, l.day).Add(time.Duration(i) * time.Minute), ExternalID: fmt.Sprintf("s%d", i)})
	}
	if _, err := st.Import(msgs); err != nil {
		t.Fatal(err)
	}
	syncIndex(t, x)
	found := func(threshold float64) []string {
		t.Helper()
		r, err := x.Search(context.Background(), Query{Prompt: "ridge trail hike", Channel: "walks", MaxResults: 10, ScoreThreshold: threshold})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, res := range r.Results {
			out = append(out, res.ExternalIDs...)
		}
		return out
	}
	x.p.prfDocs = 0 // no feedback round: only the session can bring the answer
	x.p.fill = 0.5
	got := found(0)
	if len(got) == 0 || got[0] != "s0" || !slices.Contains(got, "s2") {
		t.Errorf("with fill: %v, want the match s0 first and the answer s2 of its session", got)
	}
	if slices.Contains(got, "s3") || slices.Contains(got, "s4") {
		t.Errorf("with fill: %v holds a line of a session without a match", got)
	}
	if got := found(fillScore + 1); slices.Contains(got, "s2") {
		t.Errorf("a threshold over the fill lines' score still finds them: %v", got)
	}
	x.p.fill = 0
	if got := found(0); slices.Contains(got, "s2") {
		t.Errorf("without fill the answer %v is found: the test does not show the part", got)
	}
}

// TestFillKeepsTheFilters: the lines a session lends obey the query's
// time bounds like the matches.
func TestFillKeepsTheFilters(t *testing.T) {
	x, st := newTestIndex(t, Options{VectorWeight: hybridOff})
	var msgs []*store.Message
	for i, text := range []string{"the ridge trail was muddy", "we turned back early", "next time we bring boots"} {
		msgs = append(msgs, &store.Message{Channel: "walks", Role: store.RoleUser, User: "alice", Text: text,
			Time: t0.Add(time.Duration(i) * 10 * time.Minute), ExternalID: fmt.Sprintf("m%d", i)})
	}
	if _, err := st.Import(msgs); err != nil {
		t.Fatal(err)
	}
	syncIndex(t, x)
	x.p.prfDocs = 0 // no feedback round: only the session can bring the others
	x.p.fill = 1
	r, err := x.Search(context.Background(), Query{Prompt: "ridge trail", Until: t0.Add(15 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, res := range r.Results {
		got = append(got, res.ExternalIDs...)
	}
	if !slices.Equal(got, []string{"m0", "m1"}) {
		t.Errorf("until 15 minutes in: %v, want the match m0 and the line m1 of its session, not m2 after the bound", got)
	}
}

func TestSplitsHoldOutTheRest(t *testing.T) {
	for _, c := range []struct{ n, k, splits int }{{5, 2, 10}, {5, 1, 5}, {4, 3, 4}, {10, 2, 45}} {
		test, train, err := Splits(c.n, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if len(test) != c.splits || len(train) != c.splits {
			t.Fatalf("Splits(%d, %d): %d splits, want %d", c.n, c.k, len(test), c.splits)
		}
		heldOut := map[int]int{}
		seen := map[string]bool{}
		for s := range test {
			if len(train[s]) != c.k || len(test[s]) != c.n-c.k {
				t.Errorf("Splits(%d, %d) split %d tunes on %v, holds out %v", c.n, c.k, s, train[s], test[s])
			}
			for _, x := range test[s] {
				if slices.Contains(train[s], x) {
					t.Errorf("Splits(%d, %d) split %d tunes on %d, which it holds out", c.n, c.k, s, x)
				}
				heldOut[x]++
			}
			key := fmt.Sprint(train[s])
			if seen[key] {
				t.Errorf("Splits(%d, %d) tunes on %s twice", c.n, c.k, key)
			}
			seen[key] = true
		}
		want := len(test) * (c.n - c.k) / c.n // C(n-1, k)
		for x := range c.n {
			if heldOut[x] != want {
				t.Errorf("Splits(%d, %d) holds out conversation %d %d times, want %d", c.n, c.k, x, heldOut[x], want)
			}
		}
	}
	for _, bad := range []struct{ n, k int }{{5, 0}, {5, 5}, {1, 1}} {
		if _, _, err := Splits(bad.n, bad.k); err == nil {
			t.Errorf("Splits(%d, %d) accepted", bad.n, bad.k)
		}
	}
}

// TestALentLineFollowsItsMatch: a line the session lends comes after the
// talk it answers; one said before the match does not open the match's
// passage (a passage shows its lines in order, so it would lead it).
func TestALentLineFollowsItsMatch(t *testing.T) {
	x, st := newTestIndex(t, Options{VectorWeight: hybridOff})
	var msgs []*store.Message
	for i, text := range []string{"good morning everyone", "the ridge trail was muddy", "we turned back early"} {
		msgs = append(msgs, &store.Message{Channel: "walks", Role: store.RoleUser, User: "alice", Text: text,
			Time: t0.Add(time.Duration(i) * time.Minute), ExternalID: fmt.Sprintf("m%d", i)})
	}
	if _, err := st.Import(msgs); err != nil {
		t.Fatal(err)
	}
	syncIndex(t, x)
	x.p.prfDocs = 0
	x.p.fill = 1
	r, err := x.Search(context.Background(), Query{Prompt: "ridge trail"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, res := range r.Results {
		got = append(got, res.ExternalIDs...)
	}
	if len(got) != 3 || got[0] != "m1" || got[1] != "m2" {
		t.Errorf("%v: want the match m1 first, the line after it next, the line before it last", got)
	}
}

// BenchmarkSearchFill times search mode with the fill off and on over the
// recall bench's synthetic history (RECALL_BENCH_MESSAGES messages,
// default 20000; one long session per channel, the fill's worst case).
func BenchmarkSearchFill(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("RECALL_BENCH_MESSAGES")); err == nil {
		n = v
	}
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	gen := newSynth(1)
	var msgs []*store.Message
	for k := range n {
		msgs = append(msgs, &store.Message{Channel: fmt.Sprintf("bench-%02d", k%4), Role: store.RoleUser, User: gen.name(),
			Text: gen.sentence(), Time: t0.Add(time.Duration(k) * 30 * time.Second), ExternalID: fmt.Sprint(k)})
	}
	if _, err := st.Import(msgs); err != nil {
		b.Fatal(err)
	}
	x, err := New(Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	if err := x.Sync(context.Background()); err != nil {
		b.Fatal(err)
	}
	queries := make([]string, 200)
	for i := range queries {
		queries[i] = gen.query()
	}
	for _, fill := range []float64{0, 0.5} {
		b.Run(fmt.Sprintf("fill=%g", fill), func(b *testing.B) {
			x.p.fill = fill
			i := 0
			for b.Loop() {
				if _, err := x.Search(context.Background(), Query{Prompt: queries[i%len(queries)]}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
