package recall

import (
	"math"
	"slices"
	"sync"
)

// posting is one document that holds a term and the term's count in it,
// packed in 32 bits: the document number above tfBits, the count (capped
// at maxTF) below. The postings are most of the index's memory (about 17
// a message); packed, a million messages' take 4 bytes each, not 8.
type posting uint32

const (
	tfBits = 5
	// maxTF caps a term's count in one message: BM25's tf part has
	// saturated long before (k1 is about 1), and the message's length
	// (docLen) stays exact.
	maxTF = 1<<tfBits - 1
	// maxDocs is how many messages the lexical index can number (134
	// million); messages past it are not indexed.
	maxDocs = 1 << (32 - tfBits)
)

func mkPosting(doc, tf uint32) posting { return posting(doc<<tfBits | min(tf, maxTF)) }
func (p posting) doc() uint32          { return uint32(p) >> tfBits }
func (p posting) tf() uint32           { return uint32(p) & maxTF }

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
		l.posts[id] = append(l.posts[id], mkPosting(doc, n))
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
// term over a million documents costs no map traffic. A document's score
// and cover sit side by side: a posting costs one cache line, not two.
type accumulator struct {
	e       []accEntry
	touched []uint32
	// high lists the documents whose score has reached floor (0: no
	// floor yet): once n of them have, the top n are among them, so the
	// selection reads them instead of every touched document.
	high  []uint32
	floor float32
	sel   []float32
	// tab caches one term's scores by document length and count; it is
	// refilled for each long list.
	tab []float32
}

type accEntry struct{ score, cover float32 }

// The common-term boost (see search) starts once at least
// max(4n, boostMinCandidates) documents are candidates and a term's list is
// longer than boostSpan times their number. They are variables only so a
// test can reach the boost on a small corpus; nothing else sets them.
var (
	boostMinCandidates = 1000
	boostSpan          = 16
)

// tabLens bounds the document lengths the per-term score table holds;
// longer documents are scored directly.
const tabLens = 128

// bm25 is one term's score in one document: wi is the term's weight times
// its IDF, tf its count there, dl the document's length in terms, avg the
// mean length. Every path scores through it, so a score is the same
// float32 however it was reached.
func bm25(wi, k1, b, avg float64, tf, dl uint32) float32 {
	t := float64(tf)
	norm := k1 * (1 - b + b*float64(dl)/avg)
	return float32(wi * t * (k1 + 1) / (t + norm))
}

// qterm is a term of a search with its weight, IDF and share of the
// query's IDF mass.
type qterm struct {
	id    uint32
	w     float64
	idf   float64
	share float32
}

// search returns the top n documents for the query terms that keep
// accepts, best first. With expand, it then asks expand for feedback terms
// (given the first ranking) and adds them to the same scores, returning
// the second ranking too: the query's terms are scored once.
func (l *lexicon) search(query []string, n int, keep func(uint32) bool, k1, b float64, expand func([]lexHit) map[string]float64) (first, second []lexHit) {
	N := len(l.docLen)
	if N == 0 || n <= 0 {
		return nil, nil
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
	idf := func(id uint32) float64 {
		df := float64(len(l.posts[id]))
		return math.Log(1 + (float64(N)-df+0.5)/(df+0.5))
	}
	var mass float64
	for i := range terms {
		terms[i].idf = idf(terms[i].id)
		mass += terms[i].idf * terms[i].w
	}
	for i := range terms {
		terms[i].share = float32(terms[i].idf * terms[i].w / mass)
	}
	acc, _ := l.accs.Get().(*accumulator)
	if acc == nil {
		acc = &accumulator{tab: make([]float32, tabLens<<tfBits)}
	}
	if len(acc.e) < N {
		acc.e = make([]accEntry, N+N/4)
	}
	defer func() {
		if dense(len(acc.touched), N) {
			clear(acc.e[:N])
		} else {
			for _, d := range acc.touched {
				acc.e[d] = accEntry{}
			}
		}
		acc.touched = acc.touched[:0]
		acc.high, acc.floor = acc.high[:0], 0
		l.accs.Put(acc)
	}()
	avg := float64(l.total) / float64(N)
	boostAfter := max(4*n, boostMinCandidates)
	docLen := l.docLen[:N]
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
			if acc.floor == 0 && len(acc.touched) >= n && len(posts) > 8*n {
				setFloor(acc, n)
			}
			floor := acc.floor
			if floor == 0 {
				floor = float32(math.Inf(1))
			}
			if t := len(acc.touched); t >= boostAfter && len(posts) > boostSpan*t {
				for _, d := range acc.touched {
					if j, ok := slices.BinarySearchFunc(posts, d, func(p posting, d uint32) int { return int(p.doc()) - int(d) }); ok {
						e := &acc.e[d]
						was := e.score
						e.score += bm25(wi, k1, b, avg, posts[j].tf(), docLen[d])
						e.cover += q.share
						if was < floor && e.score >= floor {
							acc.high = append(acc.high, d)
						}
					}
				}
				continue
			}
			// A term's score depends only on the count and the length:
			// a long list reads it from a table filled as it goes (a
			// score is never 0, so 0 is "not yet").
			tab := acc.tab
			if len(posts) < len(tab) {
				tab = nil
			} else {
				clear(tab)
			}
			touched, high := acc.touched, acc.high
			for _, p := range posts {
				d := p.doc()
				if keep != nil && !keep(d) {
					continue
				}
				dl := docLen[d]
				var s float32
				if k := dl<<tfBits | p.tf(); dl < tabLens && tab != nil {
					if s = tab[k]; s == 0 {
						s = bm25(wi, k1, b, avg, p.tf(), dl)
						tab[k] = s
					}
				} else {
					s = bm25(wi, k1, b, avg, p.tf(), dl)
				}
				e := &acc.e[d]
				was := e.score
				if was == 0 {
					touched = append(touched, d)
				}
				e.score = was + s
				e.cover += q.share
				if was < floor && e.score >= floor {
					high = append(high, d)
				}
			}
			acc.touched, acc.high = touched, high
		}
	}
	add(terms)
	first = topHits(acc, n)
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
	return first, topHits(acc, n)
}

// setFloor sets acc's floor to the n-th best score so far (n ≤ touched)
// and lists the documents at or above it. Scores only grow, so every
// document that ends at or above the floor is listed: the ones there now,
// and the ones search lists as they cross it.
func setFloor(acc *accumulator, n int) {
	acc.sel = acc.sel[:0]
	for _, d := range acc.touched {
		acc.sel = append(acc.sel, acc.e[d].score)
	}
	acc.floor = nthLargest(acc.sel, n)
	for _, d := range acc.touched {
		if acc.e[d].score >= acc.floor {
			acc.high = append(acc.high, d)
		}
	}
}

// nthLargest returns the n-th largest of xs (1 ≤ n ≤ len(xs)), reordering
// xs.
func nthLargest(xs []float32, n int) float32 {
	k := n - 1
	lo, hi := 0, len(xs)-1
	for lo < hi {
		p := xs[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] > p {
				i++
			}
			for xs[j] < p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

// dense reports whether touched documents of N are better cleared all at
// once than one by one.
func dense(touched, N int) bool { return touched > N/8 }

// topHits selects the n best touched documents with a bounded min-heap:
// among those over the floor when there is one (at least n are).
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
	offer := func(d uint32, e accEntry) {
		x := lexHit{doc: d, score: e.score, cover: e.cover}
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
			return
		}
		if less(h[0], x) {
			h[0] = x
			down(0)
		}
	}
	from := acc.touched
	if acc.floor > 0 {
		from = acc.high
	}
	for _, d := range from {
		if e := acc.e[d]; len(h) < n || e.score >= h[0].score {
			offer(d, e)
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
