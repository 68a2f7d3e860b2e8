package recall

import (
	"math"
	"slices"
	"sync"
)

// posting is one document that holds a term, with the term's count in it.
type posting struct {
	doc uint32
	tf  uint32
}

// lexicon is an in-memory inverted index with BM25 scoring. It is not
// safe for concurrent use; corpus guards it.
type lexicon struct {
	terms  map[string]uint32
	posts  [][]posting
	docLen []uint32
	total  uint64
	accs   sync.Pool // *accumulator
}

func newLexicon() *lexicon {
	return &lexicon{terms: make(map[string]uint32)}
}

// add indexes doc (which must be the next doc number) with its terms.
func (l *lexicon) add(doc uint32, terms []string) {
	for uint32(len(l.docLen)) <= doc {
		l.docLen = append(l.docLen, 0)
	}
	l.docLen[doc] = uint32(len(terms))
	l.total += uint64(len(terms))
	counts := make(map[string]uint32, len(terms))
	for _, t := range terms {
		counts[t]++
	}
	for t, n := range counts {
		id, ok := l.terms[t]
		if !ok {
			id = uint32(len(l.posts))
			l.terms[t] = id
			l.posts = append(l.posts, nil)
		}
		l.posts[id] = append(l.posts[id], posting{doc: doc, tf: n})
	}
}

// lexHit is a scored document.
type lexHit struct {
	doc   uint32
	score float32
	// cover is the share of the query's IDF mass the document holds (0–1).
	cover float32
}

// accumulator holds per-document scores for one query, dense so a common
// term over a million documents costs no map traffic.
type accumulator struct {
	score   []float32
	cover   []float32
	touched []uint32
}

// search returns the top n documents for the query terms that keep
// accepts, best first.
func (l *lexicon) search(query []string, extra map[string]float64, n int, keep func(uint32) bool, k1, b float64) []lexHit {
	N := len(l.docLen)
	if N == 0 || n <= 0 {
		return nil
	}
	avg := float64(l.total) / float64(N)
	qtf := map[uint32]float64{}
	var order []uint32
	for _, t := range query {
		if id, ok := l.terms[t]; ok {
			if qtf[id] == 0 {
				order = append(order, id)
			}
			qtf[id]++
		}
	}
	for t, w := range extra {
		if id, ok := l.terms[t]; ok && w > 0 {
			if qtf[id] == 0 {
				order = append(order, id)
			}
			qtf[id] += w
		}
	}
	if len(order) == 0 {
		return nil
	}
	idfs := make([]float64, len(order))
	var mass float64
	for i, id := range order {
		df := float64(len(l.posts[id]))
		idfs[i] = math.Log(1 + (float64(N)-df+0.5)/(df+0.5))
		mass += idfs[i] * qtf[id]
	}
	acc, _ := l.accs.Get().(*accumulator)
	if acc == nil {
		acc = &accumulator{}
	}
	if len(acc.score) < N {
		acc.score = make([]float32, N+N/4)
		acc.cover = make([]float32, N+N/4)
	}
	defer func() {
		for _, d := range acc.touched {
			acc.score[d], acc.cover[d] = 0, 0
		}
		acc.touched = acc.touched[:0]
		l.accs.Put(acc)
	}()
	for i, id := range order {
		idf := idfs[i]
		w := qtf[id]
		share := float32(idf * w / mass)
		for _, p := range l.posts[id] {
			if keep != nil && !keep(p.doc) {
				continue
			}
			tf := float64(p.tf)
			norm := k1 * (1 - b + b*float64(l.docLen[p.doc])/avg)
			s := float32(w * idf * tf * (k1 + 1) / (tf + norm))
			if acc.score[p.doc] == 0 {
				acc.touched = append(acc.touched, p.doc)
			}
			acc.score[p.doc] += s
			acc.cover[p.doc] += share
		}
	}
	hits := topHits(acc, n)
	return hits
}

// topHits selects the n best touched documents with a bounded min-heap.
func topHits(acc *accumulator, n int) []lexHit {
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
