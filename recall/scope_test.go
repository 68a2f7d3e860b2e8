package recall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// chat makes n lines of a two-person chat on channel ch: each line its
// speaker's name, then words from topics, so names and topics repeat as
// they do in a real conversation.
func chat(ch string, people, topics []string, n int, seed uint64) []*store.Message {
	r := rand.New(rand.NewPCG(seed, 7))
	var out []*store.Message
	for i := range n {
		words := make([]string, 0, 8)
		for range 3 + r.IntN(5) {
			words = append(words, topics[r.IntN(len(topics))])
		}
		text := fmt.Sprint(words)
		out = append(out, &store.Message{Channel: ch, Role: store.RoleUser, User: people[i%2], Text: text[1 : len(text)-1],
			Time: t0.Add(time.Duration(i) * time.Minute), ExternalID: fmt.Sprintf("%s-%d", ch, i)})
	}
	return out
}

// A channel's ranking is its own: the same conversation, alone in a store
// or beside others whose words and names differ, ranks the same for the
// same question. (With the store's statistics, a name common in its own
// conversation and rare in the store weighed more beside the others.)
func TestAChannelRanksByItsOwnStatistics(t *testing.T) {
	mine := chat("a", []string{"Caroline", "Melanie"},
		[]string{"painting", "camping", "adoption", "guitar", "school", "race", "charity", "beach", "sunset", "kids", "pottery", "support", "group", "counseling"}, 400, 1)
	others := append(chat("b", []string{"Jon", "Gina"},
		[]string{"dance", "studio", "bank", "loan", "painting", "beach", "store", "fashion", "kids", "race"}, 600, 2),
		chat("c", []string{"Tim", "John"}, []string{"harry", "potter", "basketball", "school", "group", "travel", "castle", "books"}, 600, 3)...)
	ranked := func(withOthers bool) map[string][]string {
		x, st := newTestIndex(t, Options{})
		msgs := slices.Clone(mine)
		if withOthers {
			msgs = append(msgs, others...)
		}
		for _, m := range msgs {
			m.ID = "" // each store gives its own
		}
		if _, err := st.Import(msgs); err != nil {
			t.Fatal(err)
		}
		syncIndex(t, x)
		out := map[string][]string{}
		for _, q := range []string{"What did Caroline paint at the beach?", "Melanie camping kids", "When did Caroline go to the support group?", "Melanie pottery race charity"} {
			turns, err := x.rankedTurns(context.Background(), q, "a", 40)
			if err != nil {
				t.Fatal(err)
			}
			out[q] = turns
		}
		return out
	}
	alone, beside := ranked(false), ranked(true)
	for q, want := range alone {
		if len(want) < 40 {
			t.Fatalf("%q: %d turns, the test wants 40", q, len(want))
		}
		if !slices.Equal(beside[q], want) {
			t.Errorf("%q ranks otherwise beside other channels:\n alone  %v\n beside %v", q, want, beside[q])
		}
	}
}

// A long posting list's count in scope is estimated from a sample, within
// a few percent.
func TestScopeEstimatesALongListsCount(t *testing.T) {
	var posts []posting
	for d := range uint32(100_000) {
		if d%3 != 0 {
			posts = append(posts, mkPosting(d, 1))
		}
	}
	sc := &scope{n: 50_000, in: func(d uint32) bool { return d%2 == 0 }}
	want := 0
	for _, p := range posts {
		if sc.in(p.doc()) {
			want++
		}
	}
	got := sc.df(0, posts)
	if diff := float64(got-want) / float64(want); diff < -0.03 || diff > 0.03 {
		t.Errorf("df in scope %d, counted %d", got, want)
	}
	short := posts[:dfSample]
	n := 0
	for _, p := range short {
		if sc.in(p.doc()) {
			n++
		}
	}
	if got := sc.df(0, short); got != n {
		t.Errorf("a short list's count is %d, not the exact %d", got, n)
	}
}

// A long list's count in a channel is remembered until the list has grown
// by more than a 64th.
func TestScopeRemembersALongListsCount(t *testing.T) {
	var posts []posting
	for d := range uint32(1000) {
		posts = append(posts, mkPosting(d, 1))
	}
	looks := 0
	sc := &scope{n: 500, ch: 3, memo: &dfMemo{}, in: func(d uint32) bool { looks++; return d%2 == 0 }}
	if got := sc.df(7, posts); got != 500 || looks != 1000 {
		t.Fatalf("df %d after %d looks, want 500 after 1000", got, looks)
	}
	if got := sc.df(7, posts); got != 500 || looks != 1000 {
		t.Fatalf("a second count looked again (%d looks) or changed (%d)", looks, got)
	}
	posts = append(posts, mkPosting(1000, 1), mkPosting(1001, 1))
	if got := sc.df(7, posts); got != 500 || looks != 1000 {
		t.Errorf("a list grown by 2 of 1000 was counted again: %d looks, df %d", looks, got)
	}
	for d := range uint32(20) {
		posts = append(posts, mkPosting(1002+d, 1))
	}
	if got := sc.df(7, posts); got != 511 || looks != 2022 {
		t.Errorf("a list grown by 22 of 1000: df %d after %d looks, want 511 counted afresh (2022 looks)", got, looks)
	}
	other := *sc
	other.ch = 4
	if other.df(7, posts); looks != 3044 {
		t.Errorf("another channel's count was taken from the memo")
	}
}
