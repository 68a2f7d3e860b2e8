package recall

import (
	"math"
	"math/bits"
	"slices"
	"testing"
)

// The reference lexical search: the plain scoring every posting of every
// walked term into dense score arrays, as search ran before it was made
// fast. TestLexicalFastMatchesReference holds search to it.

type refAcc struct {
	score   []float32
	cover   []float32
	touched []uint32
}

// searchRef returns the top n documents for the query terms that keep
// accepts, best first. With expand, it then asks expand for feedback terms
// (given the first ranking) and adds them to the same scores, returning
// the second ranking too: the query's terms are scored once.
func (l *lexicon) searchRef(query []string, n int, keep func(uint32) bool, sc *scope, k1, b float64, expand func([]lexHit) map[string]float64, boosts *int) (first, second []lexHit) {
	N := l.docLen.n()
	if N == 0 || n <= 0 {
		return nil, nil
	}
	type qterm struct {
		id    uint32
		w     float64
		idf   float64
		share float32
	}
	var terms []qterm
	seen := map[uint32]int{}
	for _, t := range query {
		if id, ok := l.terms[t]; ok {
			if i, dup := seen[id]; dup {
				terms[i].w++
				continue
			}
			seen[id] = len(terms)
			terms = append(terms, qterm{id: id, w: 1})
		}
	}
	if len(terms) == 0 {
		return nil, nil
	}
	// The scope's statistics, counted the slow way.
	avg := float64(l.total) / float64(N)
	idf := func(id uint32) float64 {
		df := float64(len(l.posts[id]))
		return math.Log(1 + (float64(N)-df+0.5)/(df+0.5))
	}
	if sc != nil {
		var n, total int
		for d := range N {
			if sc.in(uint32(d)) {
				n++
				total += int(l.docLen.at(uint32(d)))
			}
		}
		avg = float64(total) / float64(n)
		idf = func(id uint32) float64 {
			df := 0
			for _, p := range l.posts[id] {
				if sc.in(p.doc()) {
					df++
				}
			}
			if len(l.posts[id]) > dfSample {
				return idfOf(id, l.posts[id], N, sc) // estimated: its own test
			}
			return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
		}
	}
	var mass float64
	for i := range terms {
		terms[i].idf = idf(terms[i].id)
		mass += terms[i].idf * terms[i].w
	}
	for i := range terms {
		terms[i].share = float32(terms[i].idf * terms[i].w / mass)
	}
	acc := &refAcc{score: make([]float32, N), cover: make([]float32, N)}
	boostAfter := max(4*n, boostMinCandidates)
	// Rare terms first. A common term met after enough candidates are in
	// only raises the scores of those candidates (found by binary search
	// in its doc-ordered postings) instead of walking its whole list: a
	// message that matches nothing but "like" and "day" would not make the
	// top anyway, and at a million messages the walk is what costs.
	add := func(ts []qterm) {
		// Ties by term number: the feedback terms come from a map, and
		// the order of the additions is the last bit of a score.
		slices.SortFunc(ts, func(a, b qterm) int {
			if c := len(l.posts[a.id]) - len(l.posts[b.id]); c != 0 {
				return c
			}
			return int(a.id) - int(b.id)
		})
		for _, q := range ts {
			posts := l.posts[q.id]
			wi := q.w * q.idf
			score := func(p posting) float32 {
				tf := float64(p.tf())
				norm := k1 * (1 - b + b*float64(l.docLen.at(p.doc()))/avg)
				return float32(wi * tf * (k1 + 1) / (tf + norm))
			}
			if t := len(acc.touched); t >= boostAfter && len(posts) > boostSpan*t {
				*boosts++
				for _, d := range acc.touched {
					if j, ok := slices.BinarySearchFunc(posts, d, func(p posting, d uint32) int { return int(p.doc()) - int(d) }); ok {
						acc.score[d] += score(posts[j])
						acc.cover[d] += q.share
					}
				}
				continue
			}
			for _, p := range posts {
				d := p.doc()
				if keep != nil && !keep(d) {
					continue
				}
				if acc.score[d] == 0 {
					acc.touched = append(acc.touched, d)
				}
				acc.score[d] += score(p)
				acc.cover[d] += q.share
			}
		}
	}
	add(terms)
	first = topHitsRef(acc, n)
	if expand == nil || len(first) == 0 {
		return first, nil
	}
	var more []qterm
	for t, w := range expand(first) {
		id, ok := l.terms[t]
		if _, dup := seen[id]; !ok || dup || w <= 0 {
			continue
		}
		more = append(more, qterm{id: id, w: w, idf: idf(id)})
	}
	if len(more) == 0 {
		return first, nil
	}
	// Feedback terms count toward a message's share of the query too, at
	// their (smaller) weight.
	total := mass
	for _, q := range more {
		total += q.idf * q.w
	}
	for i := range more {
		more[i].share = float32(more[i].idf * more[i].w / total)
	}
	add(more)
	return first, topHitsRef(acc, n)
}

// topHitsRef selects the n best touched documents with a bounded min-heap.
func topHitsRef(acc *refAcc, n int) []lexHit {
	h := make([]lexHit, 0, n)
	less := func(a, b lexHit) bool { // a ranks below b
		if a.score != b.score {
			return a.score < b.score
		}
		return a.doc < b.doc
	}
	down := func(i int) {
		for {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(h) && less(h[l], h[m]) {
				m = l
			}
			if r < len(h) && less(h[r], h[m]) {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for _, d := range acc.touched {
		x := lexHit{doc: d, score: acc.score[d], cover: acc.cover[d]}
		if len(h) < n {
			h = append(h, x)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !less(h[i], h[p]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if less(h[0], x) {
			h[0] = x
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b lexHit) int {
		if less(a, b) {
			return 1
		}
		if less(b, a) {
			return -1
		}
		return 0
	})
	return h
}

// TestLexicalFastMatchesReference holds the fast lexical search (the
// per-term score tables, the side-by-side accumulator, the dense clear) to
// the reference on a seeded synthetic corpus: the same documents in the
// same order with bit-identical scores and covers, for both passes, with
// and without a filter, at pool sizes that take the common-term boost and
// at one that does not.
func TestLexicalFastMatchesReference(t *testing.T) {
	gen := newSynth(7)
	l := newLexicon()
	var texts [][]string
	var stems stemCache
	// The boost starts at 1,000 candidates and a term in 16 times as
	// many messages: at those thresholds it takes 40,000 messages (fewer,
	// 15,000 or 25,000, give no query, or a handful, whose common word
	// only boosts candidates). The test lowers both so a few thousand
	// messages reach it, the scale of the run it stands for shrunk with
	// them; the fast search and the reference read the same thresholds.
	// Still enough messages that the commonest words' lists are longer
	// than the score table (tabLens<<tfBits postings).
	// The same goes for the walks: a list is split between the cores from
	// 16,384 postings and reads its scores from a table from 4,096; lowered,
	// the corpus has lists walked each way, split and whole, with and
	// without the table.
	n := 8000
	defer func(m, s, p, d int) {
		boostMinCandidates, boostSpan, parallelFrom, tableFrom = m, s, p, d
	}(boostMinCandidates, boostSpan, parallelFrom, tableFrom)
	boostMinCandidates, boostSpan, parallelFrom, tableFrom = 200, 4, 3000, 1000
	for d := range n {
		ts := stems.tokens(gen.name() + ": " + gen.sentence())
		l.add(uint32(d), ts)
		texts = append(texts, ts)
	}
	longest := 0
	for _, p := range l.posts {
		longest = max(longest, len(p))
	}
	if longest < tabLens<<tfBits {
		t.Fatalf("the longest posting list has %d entries, under the score table's %d: the corpus does not test the table", longest, tabLens<<tfBits)
	}
	// A long message, scored past the table.
	long := make([]string, 0, 2*tabLens)
	for range 2 * tabLens {
		long = append(long, stems.tokens(gen.sentence())...)
	}
	l.add(uint32(n), long)
	texts = append(texts, long)
	// The feedback round as expansion picks it, from kept texts: the
	// top documents' words not asked for, by score share.
	expansion := func(query []string) func([]lexHit) map[string]float64 {
		return func(first []lexHit) map[string]float64 {
			asked := map[string]bool{}
			for _, q := range query {
				asked[q] = true
			}
			out := map[string]float64{}
			for i, h := range first[:min(5, len(first))] {
				for k, w := range texts[h.doc] {
					if !asked[w] && len(out) < 10 {
						out[w] = 0.3 * float64(h.score/first[0].score) / float64(1+i+k%3)
					}
				}
			}
			return out
		}
	}
	third := func(d uint32) bool { return d%3 == 1 }
	scoped := &scope{in: third}
	for d := range l.docLen.n() {
		if third(uint32(d)) {
			scoped.n++
			scoped.total += uint64(l.docLen.at(uint32(d)))
		}
	}
	filters := []struct {
		name string
		keep func(uint32) bool
		sc   *scope
	}{
		{"all", nil, nil},
		{"a third", third, nil},
		{"a third, its statistics", third, scoped},
		{"sparse", func(d uint32) bool { return bits.OnesCount32(d)%2 == 0 }, nil},
	}
	boosts, queries := 0, 0
	for _, pool := range []int{100, 250, 2000} {
		for _, f := range filters {
			for range 60 {
				q := stems.tokens(gen.query())
				queries++
				var nb int
				wantFirst, wantSecond := l.searchRef(q, pool, f.keep, f.sc, 1.2, 0.3, expansion(q), &nb)
				boosts += nb
				first, second := l.search(q, pool, f.keep, f.sc, 1.2, 0.3, expansion(q))
				for _, c := range []struct {
					name      string
					got, want []lexHit
				}{{"first", first, wantFirst}, {"second", second, wantSecond}} {
					if len(c.got) != len(c.want) {
						t.Fatalf("pool %d, %s, %q: %s pass has %d hits, the reference %d", pool, f.name, q, c.name, len(c.got), len(c.want))
					}
					for i := range c.got {
						g, w := c.got[i], c.want[i]
						if g.doc != w.doc || math.Float32bits(g.score) != math.Float32bits(w.score) || math.Float32bits(g.cover) != math.Float32bits(w.cover) {
							t.Fatalf("pool %d, %s, %q: %s pass hit %d is %+v, the reference's %+v", pool, f.name, q, c.name, i, g, w)
						}
					}
				}
			}
		}
	}
	if boosts == 0 {
		t.Fatalf("no query of %d took the common-term boost: the corpus does not test it", queries)
	}
	t.Logf("%d queries, %d common-term boosts", queries, boosts)
}

func TestNthLargest(t *testing.T) {
	gen := newSynth(3)
	for range 300 {
		xs := make([]float32, 1+gen.r.IntN(200))
		for i := range xs {
			xs[i] = float32(gen.r.IntN(20)) // many ties
		}
		n := 1 + gen.r.IntN(len(xs))
		want := slices.Clone(xs)
		slices.Sort(want)
		if got := nthLargest(slices.Clone(xs), n); got != want[len(want)-n] {
			t.Fatalf("nthLargest(%v, %d) = %v, want %v", xs, n, got, want[len(want)-n])
		}
	}
}
