package recall

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
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
	docLen lengths
	total  uint64
	// idle is the accumulator kept for the next search, held for the
	// index's life: a million messages' is about 16 MB, and made again
	// for a search it is that many fresh pages to fault in, tens of
	// milliseconds on a small VPS. A search that finds it taken (another
	// runs) uses one of accs, which the collector may drop. accLen is the
	// longest entry table made so far (prepare's cue).
	idle   atomic.Pointer[accumulator]
	accs   sync.Pool // *accumulator
	accLen atomic.Int64
	// scoped remembers terms' counts in a channel (scope.df): searches
	// hold the corpus for reading only, so it has its own lock.
	scoped dfMemo
}

// lengths holds each document's length in terms: a byte each, the few
// lengths past a byte's range in a map. A walk over a common term reads
// the length of every document in its list, so a million messages'
// lengths are 1 MB to stream, not 4.
type lengths struct {
	short []uint8
	long  map[uint32]uint32
}

// longLen marks a length kept in long.
const longLen = 0xFF

func (ls *lengths) n() int { return len(ls.short) }

func (ls *lengths) at(d uint32) uint32 {
	if n := ls.short[d]; n != longLen {
		return uint32(n)
	}
	return ls.long[d]
}

// set sets document d's length, growing the table to hold it.
func (ls *lengths) set(d, n uint32) {
	for uint32(len(ls.short)) <= d {
		ls.short = append(ls.short, 0)
	}
	if n < longLen {
		ls.short[d] = uint8(n)
		delete(ls.long, d)
		return
	}
	ls.short[d] = longLen
	if ls.long == nil {
		ls.long = map[uint32]uint32{}
	}
	ls.long[d] = n
}

func newLexicon() *lexicon {
	return &lexicon{terms: make(map[string]uint32)}
}

// add indexes doc (which must be the next doc number) with its terms.
func (l *lexicon) add(doc uint32, terms []string) {
	l.docLen.set(doc, uint32(len(terms)))
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
//
// A long list is walked in two halves at once (see parts): its postings
// are in document order, so the halves write disjoint entries of e. Each
// half keeps its own touched and high; which half a document was listed
// by changes nothing, as every reader takes both lists as one set.
type accumulator struct {
	e       []accEntry
	touched [parts][]uint32
	// high lists the documents whose score has reached floor (0: no
	// floor yet): once n of them have, the top n are among them, so the
	// selection reads them instead of every touched document.
	high  [parts][]uint32
	floor float32
	sel   []float32
	// tab holds one long list's scores by document length and count
	// (scoreTable); it is filled again for each.
	tab []float32
}

// newAccumulator makes an accumulator for n documents, with room for
// more (n/4) and for the lists of a search over common words.
func newAccumulator(n int) *accumulator {
	m := n + n/4
	a := &accumulator{e: make([]accEntry, m), tab: make([]float32, tabLens<<tfBits)}
	for p := range a.touched {
		// A walk over a common word's half list needs room for all of
		// it beyond what its part touched before: this much held every
		// search of the million-message benchmark (a search that needs
		// more grows the list once).
		a.touched[p] = make([]uint32, 0, m/2+m/8)
	}
	return a
}

// touch writes every page of a's tables, so that the system gives them
// to the process now and not during a search.
func (a *accumulator) touch() {
	clear(a.e)
	clear(a.tab)
	for p := range a.touched {
		clear(a.touched[p][:cap(a.touched[p])])
	}
}

// takeAcc returns an accumulator for a search of n documents, its entries
// zero and its lists empty: the idle one when it is free.
func (l *lexicon) takeAcc(n int) *accumulator {
	acc := l.idle.Swap(nil)
	if acc == nil {
		acc, _ = l.accs.Get().(*accumulator)
	}
	if acc == nil || len(acc.e) < n {
		acc = newAccumulator(n)
		for have := l.accLen.Load(); have < int64(len(acc.e)) && !l.accLen.CompareAndSwap(have, int64(len(acc.e))); {
			have = l.accLen.Load()
		}
	}
	return acc
}

// putAcc gives back an accumulator takeAcc returned, cleared.
func (l *lexicon) putAcc(acc *accumulator) {
	if !l.idle.CompareAndSwap(nil, acc) {
		l.accs.Put(acc)
	}
}

// unprepared reports whether no accumulator was made for a search of n
// documents yet (prepare would make one).
func (l *lexicon) unprepared(n int) bool { return n > 0 && l.accLen.Load() < int64(n) }

// prepare makes the accumulator a search of n documents takes, its pages
// written, unless one was made (or is being made) for that many: the
// first search after a start (or after the index outgrew it) then costs
// what the others do. It is safe to run beside searches.
func (l *lexicon) prepare(n int) {
	for {
		have := l.accLen.Load()
		if n == 0 || have >= int64(n) {
			return
		}
		if l.accLen.CompareAndSwap(have, int64(n+n/4)) {
			break
		}
	}
	acc := newAccumulator(n)
	acc.touch()
	if old := l.idle.Swap(acc); old != nil {
		l.accs.Put(old)
	}
}

// parts is how many goroutines walk one long posting list: on a small
// VPS's two cores a million-message search takes half the time.
const parts = 2

// A list of parallelFrom postings or more is walked in parts (a shorter
// one is not worth a goroutine), and one of tableFrom or more reads its
// scores from a table (filling it costs as much as scoring a few thousand
// postings). They are variables only so a test can reach both on a small
// corpus; nothing else sets them.
var (
	parallelFrom = 1 << 14
	tableFrom    = tabLens << tfBits
)

// inParts runs f for each part at once and returns when all are done.
func inParts(f func(part int)) {
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() { f(p) })
	}
	f(0)
	wg.Wait()
}

// split divides the touched documents, all parts' lists taken as one, into
// parts pieces of nearly equal size, each a list of runs.
func (a *accumulator) split() (pieces [parts][][]uint32) {
	per := (a.ntouched() + parts - 1) / parts
	p, room := 0, per
	for _, t := range a.touched {
		for len(t) > 0 {
			k := min(len(t), room)
			pieces[p] = append(pieces[p], t[:k])
			t, room = t[k:], room-k
			if room == 0 && p < parts-1 {
				p, room = p+1, per
			}
		}
	}
	return pieces
}

// findDoc finds document d in posts (in document order).
func findDoc(posts []posting, d uint32) (int, bool) {
	lo, hi := 0, len(posts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if posts[m].doc() < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(posts) && posts[lo].doc() == d
}

func (a *accumulator) ntouched() int {
	n := 0
	for _, t := range a.touched {
		n += len(t)
	}
	return n
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
// accepts, best first, scored with the statistics of sc (nil: the whole
// lexicon's). With expand, it then asks expand for feedback terms
// (given the first ranking) and adds them to the same scores, returning
// the second ranking too: the query's terms are scored once.
func (l *lexicon) search(query []string, n int, keep func(uint32) bool, sc *scope, k1, b float64, expand func([]lexHit) map[string]float64) (first, second []lexHit) {
	N := l.docLen.n()
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
	if sc != nil && (sc.n == 0 || sc.total == 0) {
		sc = nil
	}
	avg := float64(l.total) / float64(N)
	if sc != nil {
		avg = float64(sc.total) / float64(sc.n)
	}
	idf := func(id uint32) float64 { return idfOf(id, l.posts[id], N, sc) }
	var mass float64
	for i := range terms {
		terms[i].idf = idf(terms[i].id)
		mass += terms[i].idf * terms[i].w
	}
	for i := range terms {
		terms[i].share = float32(terms[i].idf * terms[i].w / mass)
	}
	acc := l.takeAcc(N)
	defer func() {
		touched := acc.ntouched()
		dense := dense(touched, N)
		clearPart := func(part int) {
			if dense {
				clear(acc.e[part*N/parts : (part+1)*N/parts])
				return
			}
			for _, d := range acc.touched[part] {
				acc.e[d] = accEntry{}
			}
		}
		// A small query's few entries are cleared here: a goroutine
		// would cost more than the clearing.
		work := touched
		if dense {
			work = N
		}
		if work < parallelFrom {
			for part := range parts {
				clearPart(part)
			}
		} else {
			inParts(clearPart)
		}
		for i := range parts {
			acc.touched[i] = acc.touched[i][:0]
			acc.high[i] = acc.high[i][:0]
		}
		acc.floor = 0
		l.putAcc(acc)
	}()
	boostAfter := max(4*n, boostMinCandidates)
	docLen := &l.docLen
	// walk scores every posting of posts that keep accepts into acc, with
	// part's lists; tab is the term's score table, nil for a short list.
	walk := func(part int, posts []posting, w termWalk, tab []float32) {
		if keep == nil && tab != nil {
			acc.touched[part], acc.high[part] = w.dense(posts, tab, acc.touched[part], acc.high[part])
			return
		}
		acc.touched[part], acc.high[part] = w.filtered(posts, keep, tab, acc.touched[part], acc.high[part])
	}
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
			if acc.floor == 0 && acc.ntouched() >= n && len(posts) > 8*n {
				setFloor(acc, n)
			}
			floor := acc.floor
			if floor == 0 {
				floor = float32(math.Inf(1))
			}
			if t := acc.ntouched(); t >= boostAfter && len(posts) > boostSpan*t {
				pieces := acc.split()
				inParts(func(part int) {
					high := acc.high[part]
					for _, ds := range pieces[part] {
						for _, d := range ds {
							if j, ok := findDoc(posts, d); ok {
								e := &acc.e[d]
								was := e.score
								e.score += bm25(wi, k1, b, avg, posts[j].tf(), docLen.at(d))
								e.cover += q.share
								if was < floor && e.score >= floor {
									high = append(high, d)
								}
							}
						}
					}
					acc.high[part] = high
				})
				continue
			}
			w := termWalk{e: acc.e[:N], lens: docLen, wi: wi, k1: k1, b: b, avg: avg, share: q.share, floor: floor}
			var tab []float32
			if len(posts) >= tableFrom {
				tab = acc.tab
				w.fill(tab)
			}
			if len(posts) < parallelFrom {
				walk(0, posts, w, tab)
				continue
			}
			// The parts hold different documents: the postings are in
			// document order, each document once.
			inParts(func(part int) {
				walk(part, posts[part*len(posts)/parts:(part+1)*len(posts)/parts], w, tab)
			})
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

// termWalk scores one term's postings into an accumulator's entries.
type termWalk struct {
	e              []accEntry
	lens           *lengths
	wi, k1, b, avg float64
	share, floor   float32
}

// score is the term's score in a document of length dl where it occurs tf
// times.
func (w *termWalk) score(tf, dl uint32) float32 { return bm25(w.wi, w.k1, w.b, w.avg, tf, dl) }

// fill fills tab (tabLens<<tfBits long) with the term's score for every
// document length under tabLens and every count: a walk over a long list
// then reads a score where it would compute one, and the loop that reads
// it is short enough for the compiler to keep in registers.
func (w *termWalk) fill(tab []float32) {
	for dl := range uint32(tabLens) {
		for tf := range uint32(1 << tfBits) {
			tab[dl<<tfBits|tf] = w.score(tf, dl)
		}
	}
}

// scoreOf is the term's score in document d, where it occurs tf times,
// computed: the walks' way for a document too long for the table. It is
// kept out of line so the walks' loops stay small.
//
//go:noinline
func (w *termWalk) scoreOf(tf, d uint32) float32 { return w.score(tf, w.lens.at(d)) }

// filtered walks posts, skipping the documents keep refuses, and returns
// touched and high with the documents it touched first and raised to the
// floor. With tab (see fill) it reads scores from it.
func (w *termWalk) filtered(posts []posting, keep func(uint32) bool, tab []float32, touched, high []uint32) ([]uint32, []uint32) {
	for _, p := range posts {
		d := p.doc()
		if keep != nil && !keep(d) {
			continue
		}
		var s float32
		if dl := w.lens.at(d); dl < tabLens && tab != nil {
			s = tab[dl<<tfBits|p.tf()]
		} else {
			s = w.scoreOf(p.tf(), d)
		}
		e := &w.e[d]
		was := e.score
		if was == 0 {
			touched = append(touched, d)
		}
		e.score = was + s
		e.cover += w.share
		if was < w.floor && e.score >= w.floor {
			high = append(high, d)
		}
	}
	return touched, high
}

// dense walks a long list with no filter, the walk a common word costs,
// reading its scores from tab (see fill). Whether a document is new to
// the query is as likely as not, so the loop lists it without a branch: it
// writes every document to touched and moves the end past it only when
// its score was 0.
func (w *termWalk) dense(posts []posting, tab []float32, touched, high []uint32) ([]uint32, []uint32) {
	tab = tab[:tabLens<<tfBits]
	nt := len(touched)
	touched = slices.Grow(touched, len(posts))[:nt+len(posts)]
	e, short := w.e, w.lens.short
	share, floor := w.share, w.floor
	for _, p := range posts {
		d := p.doc()
		var s float32
		if dl := uint32(short[d]); dl < tabLens {
			s = tab[(dl<<tfBits|p.tf())&(tabLens<<tfBits-1)]
		} else {
			s = w.scoreOf(p.tf(), d)
		}
		x := &e[d]
		was := x.score
		touched[nt] = d
		fresh := 0
		if math.Float32bits(was) == 0 {
			fresh = 1
		}
		nt += fresh
		x.score = was + s
		x.cover += share
		if was < floor && x.score >= floor {
			high = append(high, d)
		}
	}
	return touched[:nt], high
}

// setFloor sets acc's floor to the n-th best score so far (n ≤ touched)
// and lists the documents at or above it. Scores only grow, so every
// document that ends at or above the floor is listed: the ones there now,
// and the ones search lists as they cross it.
func setFloor(acc *accumulator, n int) {
	acc.sel = acc.sel[:0]
	for _, t := range acc.touched {
		for _, d := range t {
			acc.sel = append(acc.sel, acc.e[d].score)
		}
	}
	acc.floor = nthLargest(acc.sel, n)
	for i, t := range acc.touched {
		for _, d := range t {
			if acc.e[d].score >= acc.floor {
				acc.high[i] = append(acc.high[i], d)
			}
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
	for _, ds := range from {
		for _, d := range ds {
			if e := acc.e[d]; len(h) < n || e.score >= h[0].score {
				offer(d, e)
			}
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

// scope is the part of the corpus a search is asked of, one channel, with
// its own statistics. BM25's IDF and average length, and the feedback
// terms' weights, are the scope's, not the whole store's: a speaker's name
// is in every other line of their own conversation, and rare in a store
// of many, so the store's IDF would let the name outweigh what the
// question asks. (On LoCoMo's dev half, five conversations in one store
// lost 0.8 and 1.3 points of recall@25 and @50 against each alone; with
// the channel's statistics the two agree.)
type scope struct {
	n     int    // documents in scope
	total uint64 // their length in terms
	in    func(d uint32) bool
	// ch and memo, when memo is set, remember a long list's count.
	ch   uint32
	memo *dfMemo
}

// dfSample bounds how many of a term's postings scope.df reads: a longer
// list's count in scope is estimated from that many spread evenly over
// it (the IDF is a logarithm; a few percent off do not move it).
const dfSample = 4096

// dfMemoFrom is the shortest list whose count in scope is remembered:
// counting a shorter one costs less than the lock.
const dfMemoFrom = 256

// df is how many documents of posts, term id's postings, are in scope.
func (s *scope) df(id uint32, posts []posting) int {
	remember := s.memo != nil && len(posts) >= dfMemoFrom
	if remember {
		if n, ok := s.memo.get(id, s.ch, len(posts)); ok {
			return n
		}
	}
	n := s.count(posts)
	if remember {
		s.memo.put(id, s.ch, len(posts), n)
	}
	return n
}

// count counts posts in scope, estimating a list longer than dfSample
// from a sample of it: at a million messages a common term's list is
// hundreds of thousands long, and each look at a document's channel is
// a miss of the processor's cache.
func (s *scope) count(posts []posting) int {
	if len(posts) <= dfSample {
		n := 0
		for _, p := range posts {
			if s.in(p.doc()) {
				n++
			}
		}
		return n
	}
	n := 0
	for i := range dfSample {
		if s.in(posts[i*len(posts)/dfSample].doc()) {
			n++
		}
	}
	return max(1, n*len(posts)/dfSample)
}

// dfMemo remembers terms' counts in channels. A count stays good while
// its term's list has grown by less than a 64th since it was counted; the
// memo is emptied when it holds dfMemoMax counts.
type dfMemo struct {
	mu sync.Mutex
	m  map[uint64]dfCount
}

type dfCount struct{ df, of uint32 }

const dfMemoMax = 1 << 16

func (m *dfMemo) get(id, ch uint32, of int) (int, bool) {
	m.mu.Lock()
	c, ok := m.m[uint64(id)<<32|uint64(ch)]
	m.mu.Unlock()
	if !ok || of > int(c.of)+int(c.of)/64 {
		return 0, false
	}
	return int(c.df), true
}

func (m *dfMemo) put(id, ch uint32, of, df int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= dfMemoMax {
		m.m = make(map[uint64]dfCount)
	}
	m.m[uint64(id)<<32|uint64(ch)] = dfCount{df: uint32(df), of: uint32(of)}
}

// idfOf is BM25's IDF of term id, whose postings are posts, among N
// documents, or among the scope's when sc is not nil.
func idfOf(id uint32, posts []posting, N int, sc *scope) float64 {
	df := len(posts)
	if sc != nil {
		N, df = sc.n, sc.df(id, posts)
	}
	return math.Log(1 + (float64(N)-float64(df)+0.5)/(float64(df)+0.5))
}
