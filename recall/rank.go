package recall

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// Ranking runs in two stages. gather does the costly part once per query:
// BM25 over the query's words, one round of feedback terms, the search
// for the kinds of the class the question asks for (kinds.go), the
// vector scan. rank combines what gather found with the knobs of params: it is
// cheap, so the LoCoMo bench (crossval.go) tunes the knobs on some
// conversations and measures them on others without searching again, and
// what it measures is what search runs.

// params are the ranking's settings. The first group is fixed (standard
// BM25 settings for short lines and a usual feedback round); the knobs
// are chosen by cross-validation over LoCoMo conversations (docs/memory.md), each
// 0 to switch its part off.
type params struct {
	k1, b float64 // BM25
	// Pseudo-relevance feedback: the best prfTerms terms of the first
	// pass's top prfDocs documents join the query with prfWeight.
	prfDocs, prfTerms int
	prfWeight         float64

	// expand weighs the feedback pass against the first pass (query
	// expansion from the first pass): the first keeps the head of the
	// ranking sharp, the second reaches deeper.
	expand float64
	// vecWeight is the vector side's weight (BM25's is 1).
	vecWeight float64
	// context raises a line after a match by this share of the match's
	// score (answers follow questions), and the line before it by an
	// eighth of it.
	context float64
	// route raises every line of a session by this share of the session's
	// score (its three best lines' scores, scaled to the best session's):
	// a question's pieces sit in the sessions that talk about it.
	route float64
	// diversity divides the n-th line of a session by 1 + diversity·n, so
	// one session does not crowd the top (MMR by session).
	diversity float64
	// when multiplies, for a "when" question, the score of a line that
	// places something in time by 1 + when.
	when float64
	// dated multiplies the score of a message said on a date the question
	// names, or in the dateLag after it, by 1 + dated.
	dated float64
	// speaker multiplies the score of a line said by someone the question
	// names by 1 + speaker: people tell their own news.
	speaker float64
	// storeStats scores a search in one channel with the whole store's
	// statistics, not the channel's (the release before scope; the
	// cross-validation's "before").
	storeStats bool
	// fill lets lines that match nothing take part: the lines of the
	// sessions with the best matches (fillSessions), each given fill times
	// what its session (route) and the line before it (context) give a
	// match.
	fill float64
	// kinds weighs the search for the kinds of the class a question asks
	// for ("What instruments…": violin, guitar; kinds.go) against the
	// first pass.
	kinds float64
}

// defaultParams are the knobs chosen on all the LoCoMo development
// conversations by the procedure the cross-validation runs on each fold's
// training conversations (crossval.go; docs/memory.md has the held-out numbers).
// The feedback round's shape and BM25's k1 are fixed; so is the speaker
// boost, a prior (people tell their own news) rather than a fitted
// weight. The date boost, session diversity and the fill (the matching
// sessions' other lines, fillSessions) are off: under cross-validation
// they did not help beside the vectors. vecWeight is the built-in GloveEmbedder's
// (HashEmbedder's vectors get none, their words being BM25's; a model
// embedder gets modelVectorWeight).
var defaultParams = params{
	k1: 1.2, b: 0.5, prfDocs: 5, prfTerms: 10, prfWeight: 0.3,
	expand: 1, context: 0.4, route: 0.8, when: 0.25, speaker: 1, vecWeight: 0.2, kinds: 0.4,
}

// scored is a candidate message.
type scored struct {
	doc   uint32
	idx   int32   // its place in features.cands
	rank  float64 // the fused ranking score
	score float64 // the 0–100 display score
	lent  bool    // it matches nothing: its session lent it (fill)
}

// features is what gather found for one query: every candidate message
// of the three searches with what rank needs to know of it.
type features struct {
	cands []cand
	nsess int // sessions among the candidates (cand.sess counts from 0)
	vecOn bool
	when  bool // the question asks when
	err   error
}

// Where a candidate was found (cand.in).
const (
	inFirst = 1 << iota // BM25's first pass
	inFed               // the feedback pass
	inVec               // the vector scan
	inKinds             // the search for the question's kinds
)

// cand is one candidate message.
type cand struct {
	doc        uint32
	in         uint8
	timely     bool    // its text places something in time
	dated      bool    // said within the days the question names (or soon after)
	named      bool    // said by someone the question names
	l1, l2     float32 // first and feedback pass scores, each over its best
	l3, cov3   float32 // the kinds search's score over its best; the share of the question its class holds
	cov1, cov2 float32 // the share of the query's weight it holds, per pass
	v, sim     float32 // cosine over the pool's floor, scaled to the best; raw cosine
	prev, next int32   // the candidates said just before and after it (-1: none)
	sess       uint32
}

// asked is what a query asks, read from its prompt before the index is
// locked: its terms, its vector (nil: none) and the kinds of the class it
// asks for (questionKinds; reading their table the first time must not
// hold the index).
type asked struct {
	terms []string
	qv    []float32
	kinds []string
	class int // how many words name the class
}

// gather runs the query's searches; known is false when the query names a
// channel that has no message. The caller holds c.mu for reading.
func (x *Index) gather(ctx context.Context, q Query, a asked, p params) (f *features, known bool) {
	terms, qv := a.terms, a.qv
	c := x.c
	f = &features{when: whenQuestion(q.Prompt)}
	var chans []string
	chFilter := int64(-1)
	if q.Channel != "" {
		ch, ok := c.chIdx[q.Channel]
		if !ok {
			return nil, false
		}
		chFilter = int64(ch)
		chans = []string{q.Channel}
	}
	since, until := int64(math.MinInt64), int64(math.MaxInt64)
	if !q.Since.IsZero() {
		since = q.Since.UnixMilli()
	}
	if !q.Until.IsZero() {
		until = q.Until.UnixMilli()
	}
	var keep func(uint32) bool
	if chFilter >= 0 || since != math.MinInt64 || until != math.MaxInt64 || len(q.exclude) > 0 {
		keep = func(d uint32) bool {
			m := c.docs[d]
			if chFilter >= 0 && int64(m.ch) != chFilter {
				return false
			}
			if m.t < since || m.t >= until {
				return false
			}
			return !q.exclude[m.id]
		}
	}
	pool := max(100, 4*q.MaxResults*(2*q.Window+1))
	var sc *scope
	if chFilter >= 0 && !p.storeStats {
		sc = &scope{n: len(c.order[chFilter]), total: c.chLen[chFilter], ch: uint32(chFilter), memo: &c.lex.scoped,
			in: func(d uint32) bool { return int64(c.docs[d].ch) == chFilter }}
	}
	var expand func([]lexHit) map[string]float64
	if p.prfDocs > 0 {
		expand = func(first []lexHit) map[string]float64 { return x.expansion(terms, first, sc, p) }
	}
	first, fed := c.lex.search(terms, pool, keep, sc, p.k1, p.b, expand)
	var vec []vecHit
	if len(qv) > 0 {
		vec, f.err = x.vecs.Load().idx.search(ctx, qv, pool, chans, keep)
		f.vecOn = f.err == nil && len(vec) > 0
	}
	slot := make(map[uint32]int32, len(first)+len(fed)+len(vec))
	get := func(d uint32) *cand {
		i, ok := slot[d]
		if !ok {
			i = int32(len(f.cands))
			slot[d] = i
			f.cands = append(f.cands, cand{doc: d, prev: -1, next: -1})
		}
		return &f.cands[i]
	}
	for _, h := range first {
		e := get(h.doc)
		e.in |= inFirst
		e.l1, e.cov1 = h.score/first[0].score, h.cover
	}
	for _, h := range fed {
		e := get(h.doc)
		e.in |= inFed
		e.l2, e.cov2 = h.score/fed[0].score, h.cover
	}
	if f.vecOn {
		top, floor := vec[0].sim, vec[len(vec)-1].sim
		span := max(top-floor, 1e-6)
		for _, h := range vec {
			e := get(h.doc)
			e.in |= inVec
			e.v, e.sim = (h.sim-floor)/span, h.sim
		}
	}
	if p.kinds > 0 {
		if len(a.kinds) > 0 {
			// A member of the class stands for the words that name it: its
			// share of the question is theirs.
			cov := float32(min(a.class, len(terms))) / float32(max(len(terms), 1))
			hits, _ := c.lex.search(a.kinds, pool, keep, sc, p.k1, p.b, nil)
			for _, h := range hits {
				e := get(h.doc)
				e.in |= inKinds
				e.l3, e.cov3 = h.score/hits[0].score, cov
			}
		}
	}
	if p.fill > 0 {
		x.fillSessions(f, get, slot, keep)
	}
	var from, to int64
	if a, b, ok := questionDates(q.Prompt); ok {
		from, to = a.Add(-24*time.Hour).UnixMilli(), b.Add(dateLag).UnixMilli()
	}
	asked := map[uint32]bool{}
	for _, t := range terms {
		if id, ok := c.lex.terms[t]; ok {
			asked[id] = true
		}
	}
	sess := map[uint32]uint32{}
	for i := range f.cands {
		e := &f.cands[i]
		m := c.docs[e.doc]
		e.timely = m.timely
		e.named = m.speaker != noDoc && asked[m.speaker]
		e.dated = m.t >= from && m.t < to
		s, ok := sess[m.sess]
		if !ok {
			s = uint32(len(sess))
			sess[m.sess] = s
		}
		e.sess = s
		o := c.order[m.ch]
		if p := int(m.pos); p > 0 {
			if j, ok := slot[o[p-1]]; ok {
				e.prev = j
			}
		}
		if p := int(m.pos); p+1 < len(o) {
			if j, ok := slot[o[p+1]]; ok {
				e.next = j
			}
		}
	}
	f.nsess = len(sess)
	return f, true
}

// fillScore is the display score of a line found only through its
// session: the floor, so a score threshold above it drops it.
const fillScore = minScore

// fillSpan bounds how far from a match, each way, its session's lines are
// gathered: a session of a busy channel can be thousands of lines long.
const fillSpan = 64

// fillSessions adds to f's candidates the lines of the sessions of its
// matches, the best match's session first, until about as many lines were
// added as the searches found. A question's evidence that shares no word
// with it, or that the pool's bound left out, is often said in the
// session that holds its matches: rank gives such a line a share (fill)
// of what its session and the line before it earn a match, so they come
// after the matches of their session and fill the deep end of the
// ranking. The caller holds c.mu.
func (x *Index) fillSessions(f *features, get func(uint32) *cand, slot map[uint32]int32, keep func(uint32) bool) {
	c := x.c
	matched := len(f.cands)
	type hit struct {
		i int
		s float32
	}
	hits := make([]hit, 0, matched)
	for i, e := range f.cands[:matched] {
		if e.in&(inFirst|inFed) != 0 {
			hits = append(hits, hit{i, max(e.l1, e.l2)})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return 0
	})
	done := map[uint32]bool{}
	added := 0
	for _, h := range hits {
		if added >= matched {
			break
		}
		m := c.docs[f.cands[h.i].doc]
		if done[m.sess] {
			continue
		}
		done[m.sess] = true
		o := c.order[m.ch]
		at := int(m.pos)
		lo, hi := at, at
		for lo > 0 && at-lo < fillSpan && c.docs[o[lo-1]].sess == m.sess {
			lo--
		}
		for hi+1 < len(o) && hi-at < fillSpan && c.docs[o[hi+1]].sess == m.sess {
			hi++
		}
		for p := lo; p <= hi; p++ {
			d := o[p]
			if _, ok := slot[d]; ok || (keep != nil && !keep(d)) {
				continue
			}
			get(d)
			added++
		}
	}
}

// rank scores the candidates with p's knobs and returns them best first.
func (f *features) rank(p params) []scored {
	n := len(f.cands)
	useFed := p.expand > 0
	useKinds := p.kinds > 0
	vecOn := f.vecOn && p.vecWeight > 0
	lex := make([]float64, n)
	var top float64
	for i, e := range f.cands {
		if e.in&inFirst != 0 {
			lex[i] = float64(e.l1)
		}
		if useFed && e.in&inFed != 0 {
			lex[i] += p.expand * float64(e.l2)
		}
		if useKinds && e.in&inKinds != 0 {
			lex[i] += p.kinds * float64(e.l3)
		}
		top = max(top, lex[i])
	}
	base := make([]float64, n)
	out := make([]scored, 0, n)
	for i, e := range f.cands {
		if top > 0 {
			base[i] = lex[i] / top
		}
		var cov float32
		switch {
		case e.in&inFirst != 0:
			cov = e.cov1
		case useFed && e.in&inFed != 0:
			cov = e.cov2
		}
		if useKinds && e.in&inKinds != 0 {
			cov = max(cov, e.cov3)
		}
		var score float64
		inLex := e.in&inFirst != 0 || (useFed && e.in&inFed != 0) || (useKinds && e.in&inKinds != 0)
		inVec := vecOn && e.in&inVec != 0
		if !inLex && !inVec {
			if p.fill > 0 && e.in == 0 {
				out = append(out, scored{doc: e.doc, idx: int32(i), score: fillScore, lent: true})
			}
			continue
		}
		if vecOn {
			score = 50 * float64(cov)
			if inVec {
				base[i] += p.vecWeight * float64(e.v)
				score += 50 * math.Max(0, float64(e.sim))
			}
		} else {
			score = 100 * float64(cov)
		}
		score = math.Min(100, math.Round(score*10)/10)
		if p.fill > 0 {
			score = max(score, fillScore) // shown like the lines its session lends
		}
		out = append(out, scored{doc: e.doc, idx: int32(i), rank: base[i], score: score})
	}
	if p.context > 0 {
		for k := range out {
			e := f.cands[out[k].idx]
			if e.in == 0 {
				// A line that matches nothing is lent for what it answers.
				if e.prev >= 0 {
					out[k].rank += p.fill * p.context * base[e.prev]
				}
				continue
			}
			if e.prev >= 0 {
				out[k].rank += p.context * base[e.prev] // it answers a match
			}
			if e.next >= 0 {
				out[k].rank += p.context / 8 * base[e.next] // it leads to a match
			}
		}
	}
	if p.route > 0 && f.nsess > 0 {
		// A session's score is the sum of its three best lines'.
		best := make([][3]float64, f.nsess)
		for _, s := range out {
			if f.cands[s.idx].in == 0 {
				continue // a session is scored by its matches
			}
			b := &best[f.cands[s.idx].sess]
			if r := s.rank; r > b[2] {
				b[2] = r
				if b[2] > b[1] {
					b[1], b[2] = b[2], b[1]
				}
				if b[1] > b[0] {
					b[0], b[1] = b[1], b[0]
				}
			}
		}
		sess := make([]float64, f.nsess)
		var top float64
		for k, b := range best {
			sess[k] = b[0] + b[1] + b[2]
			top = max(top, sess[k])
		}
		if top > 0 {
			for k := range out {
				e := f.cands[out[k].idx]
				w := p.route
				if e.in == 0 {
					w *= p.fill
				}
				out[k].rank += w * sess[e.sess] / top
			}
		}
	}
	if (f.when && p.when > 0) || p.dated > 0 || p.speaker > 0 {
		for k := range out {
			e := f.cands[out[k].idx]
			if f.when && e.timely {
				out[k].rank *= 1 + p.when
			}
			if e.dated {
				out[k].rank *= 1 + p.dated
			}
			if e.named {
				out[k].rank *= 1 + p.speaker
			}
		}
	}
	byRank := func(a, b scored) int {
		switch {
		case a.rank > b.rank:
			return -1
		case a.rank < b.rank:
			return 1
		}
		return int(a.doc) - int(b.doc)
	}
	slices.SortFunc(out, byRank)
	if p.diversity > 0 {
		seen := make([]int, f.nsess)
		for k := range out {
			s := f.cands[out[k].idx].sess
			out[k].rank /= 1 + p.diversity*float64(seen[s])
			seen[s]++
		}
		slices.SortFunc(out, byRank)
	}
	return out
}

// expansion picks feedback terms (RM3-like): each term of the top
// documents weighs its share of the document times the document's score,
// times its IDF; the best prfTerms not already asked for join the query.
// The caller holds c.mu.
func (x *Index) expansion(query []string, top []lexHit, sc *scope, p params) map[string]float64 {
	c := x.c
	asked := map[string]bool{}
	for _, t := range query {
		asked[t] = true
	}
	best := float64(top[0].score)
	weights := map[string]float64{}
	top = top[:min(len(top), p.prfDocs)]
	refs := make([]store.Ref, len(top))
	for i, h := range top {
		refs[i] = c.ref(h.doc)
	}
	msgs, err := x.st.GetRefs(refs)
	if err != nil {
		msgs = make([]*store.Message, len(top)) // unread: no feedback from them
	}
	for i, h := range top {
		m := msgs[i]
		if m == nil || m.IsRecalled() {
			continue
		}
		ts := c.stems.tokens(docText(m))
		for _, t := range ts {
			if asked[t] {
				continue
			}
			id, ok := c.lex.terms[t]
			if !ok {
				continue
			}
			idf := idfOf(id, c.lex.posts[id], len(c.docs), sc)
			weights[t] += float64(h.score) / best / float64(len(ts)) * idf
		}
	}
	type tw struct {
		t string
		w float64
	}
	var list []tw
	for t, w := range weights {
		list = append(list, tw{t, w})
	}
	slices.SortFunc(list, func(a, b tw) int {
		if a.w != b.w {
			if a.w > b.w {
				return -1
			}
			return 1
		}
		return strings.Compare(a.t, b.t)
	})
	if len(list) == 0 {
		return nil
	}
	out := map[string]float64{}
	top1 := list[0].w
	for _, e := range list[:min(len(list), p.prfTerms)] {
		out[e.t] = p.prfWeight * e.w / top1
	}
	return out
}
