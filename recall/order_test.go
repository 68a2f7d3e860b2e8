package recall

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// TestResultsAreKInScoreOrder: a search over a history with many matches
// returns exactly k passages, each scoring no more than the one before —
// in search mode, through Recall, with and without neighbour windows.
//
// 1,000 messages (333 a channel, far more matches than the largest k, 12;
// fewer and no passage is too long to merge with the next) and 10 queries
// (80 answers) are enough: the synthetic history is seeded, so the same
// answers come every run, and 59 of them need the sort (the test fails if
// none does). Twice the queries took twice the CPU for nothing more.
func TestResultsAreKInScoreOrder(t *testing.T) {
	x, st := newTestIndex(t, Options{Embedder: HashEmbedder{}})
	gen := newSynth(7)
	var msgs []*store.Message
	for i := range 1000 {
		msgs = append(msgs, &store.Message{Channel: fmt.Sprintf("c%d", i%3), Role: store.RoleUser, User: gen.name(),
			Text: gen.sentence(), Time: t0.Add(time.Duration(i) * time.Minute), ExternalID: fmt.Sprint(i)})
	}
	if _, err := st.Import(msgs); err != nil {
		t.Fatal(err)
	}
	syncIndex(t, x)
	ctx := context.Background()
	checked, reordered := 0, 0
	for qi := range 10 {
		prompt := gen.query()
		for _, k := range []int{1, 5, 6, 12} {
			for _, window := range []int{0, 1} {
				name := fmt.Sprintf("%q k=%d window=%d", prompt, k, window)
				q := Query{Prompt: prompt, MaxResults: k, Window: window}
				if qi%2 == 1 {
					q.Channel = "c1"
				}
				search, err := x.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				viaRecall, err := x.Recall(ctx, q, ModeSearch)
				if err != nil {
					t.Fatal(err)
				}
				raw, err := x.search(ctx, withDefaults(q))
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range []*Response{search, viaRecall} {
					if len(r.Results) != k {
						t.Fatalf("%s: %d results, want exactly %d", name, len(r.Results), k)
					}
					for i := 1; i < len(r.Results); i++ {
						if r.Results[i].Score > r.Results[i-1].Score {
							t.Fatalf("%s: result %d scores %g after %g", name, i+1, r.Results[i].Score, r.Results[i-1].Score)
						}
					}
				}
				// The set is the ranking's: sorting only reorders it.
				if !sameSet(search.Results, raw.Results) {
					t.Fatalf("%s: sorting changed which passages come back", name)
				}
				checked++
				for i := range raw.Results {
					if raw.Results[i].Location != search.Results[i].Location || raw.Results[i].Channel != search.Results[i].Channel {
						reordered++
						break
					}
				}
			}
		}
	}
	t.Logf("%d of %d answers needed reordering", reordered, checked)
	if reordered == 0 {
		t.Fatalf("none of %d answers needed reordering: the test no longer shows the ranking and the score disagree", checked)
	}
}

func withDefaults(q Query) Query {
	if err := q.check(); err != nil {
		panic(err)
	}
	return q
}

func sameSet(a, b []Result) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, r := range a {
		seen[r.Channel+"/"+r.Location]++
	}
	for _, r := range b {
		seen[r.Channel+"/"+r.Location]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
