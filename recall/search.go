package recall

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/store"
	"github.com/google/uuid"
)

// Modes of a recall request.
const (
	ModeSearch = "search" // ranked retrieval, no LLM
	ModeTool   = "tool"   // the seed's natural tool: search, an LLM filter, a summary
)

// Request limits.
const (
	DefaultMaxResults = 12
	MaxMaxResults     = 64
	MaxPromptBytes    = 4096
)

// Query is one recall request.
type Query struct {
	Prompt string
	// MaxResults bounds the results (0: DefaultMaxResults; at most
	// MaxMaxResults).
	MaxResults int
	// ScoreThreshold drops results scoring below it (0–100).
	ScoreThreshold float64
	// Channel limits the search to one channel ("" searches all).
	Channel string
	// Owner is set when the owner is asking in private: only then are the
	// owner's own records (Record.OwnerOnly) found in a channel's search.
	Owner bool
	// Since and Until bound the messages' times (zero: unbounded; Until is
	// exclusive).
	Since, Until time.Time
	// Window is how many neighbouring messages each side of a hit a result
	// shows (0: none; neighbouring hits still merge into one passage). Tool
	// mode uses ToolWindow when it is 0.
	Window int
	// exclude holds message ids already returned (tool mode's later
	// rounds), excludeRecs the record parts.
	exclude     map[uuid.UUID]bool
	excludeRecs map[string]bool
}

// queryEmbedTimeout bounds embedding the query.
const queryEmbedTimeout = 15 * time.Second

// maxMerge bounds how many messages beyond its own window a passage grows
// by absorbing neighbouring hits, so a run of weak matches cannot become
// one passage of a hundred lines.
const maxMerge = 4

// minScore drops candidates that match nothing of the query's words and
// are barely similar (display score under 1 of 100).
const minScore = 1.0

// ToolWindow is how many neighbours each side of a hit tool mode shows the
// model: what was said just before and after is what makes a line
// readable. Search mode shows none by default: measured on LoCoMo, context
// lines pushed out hits at small k.
const ToolWindow = 1

// Result is one recalled passage: a window of neighbouring messages of one
// channel, or a record (an event's title, part of a theory).
type Result struct {
	// Kind is KindMessages, KindEvent or KindTheory.
	Kind string `json:"kind"`
	// ID is a record's id ("" for messages).
	ID string `json:"id,omitempty"`
	// Source names where the passage lives: "history/<channel>/<date>",
	// "event <label>" or "theory <title>".
	Source string `json:"source"`
	// Location is the messages' places in their channel, counted from 1:
	// "message 23 ~ message 25"; a theory's lines, "line 3 ~ line 9"; ""
	// for an event.
	Location string `json:"location"`
	// Text is the passage, one "messageN:speaker:text" line per message,
	// or the record's text.
	Text string `json:"text"`
	// Score is how well the best message of the passage matches, 0–100.
	Score float64 `json:"score"`
	// MessageIDs lists every message of the passage, in order, and
	// ExternalIDs their external ids ("" for messages that have none).
	MessageIDs  []string `json:"message_ids"`
	ExternalIDs []string `json:"external_ids"`
	Channel     string   `json:"channel"`
	// Hits are the message ids within the passage that matched.
	Hits []string  `json:"hits"`
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	key  string    // a record part's identity (tool mode's exclusions)
}

// Response is the answer to a Query.
type Response struct {
	Results []Result `json:"results"`
	// SummarizedInfo is tool mode's summary ("" in search mode).
	SummarizedInfo string `json:"summarized_info"`
	// Note says when the answer is partial: the index still loading, the
	// vector side missing, tool mode giving up.
	Note string `json:"note,omitempty"`
	// Lexical and Vector tell which sides answered.
	Lexical bool `json:"lexical"`
	Vector  bool `json:"vector"`
	// Rounds is how many searches tool mode ran.
	Rounds int `json:"rounds,omitempty"`
}

// ErrBadQuery wraps a rejected query; its message says what to change.
var ErrBadQuery = errors.New("bad recall query")

func (q *Query) check() error {
	q.Prompt = strings.TrimSpace(q.Prompt)
	switch {
	case q.Prompt == "":
		return fmt.Errorf("%w: the prompt is empty; describe what to recall", ErrBadQuery)
	case len(q.Prompt) > MaxPromptBytes:
		return fmt.Errorf("%w: the prompt is %d bytes; keep it under %d", ErrBadQuery, len(q.Prompt), MaxPromptBytes)
	case q.MaxResults < 0:
		return fmt.Errorf("%w: max_results must not be negative", ErrBadQuery)
	case q.ScoreThreshold < 0 || q.ScoreThreshold > 100:
		return fmt.Errorf("%w: score_threshold %g is outside 0–100", ErrBadQuery, q.ScoreThreshold)
	case !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since):
		return fmt.Errorf("%w: until (%s) is not after since (%s)", ErrBadQuery, q.Until.Format(time.RFC3339), q.Since.Format(time.RFC3339))
	}
	if q.MaxResults == 0 {
		q.MaxResults = DefaultMaxResults
	}
	q.MaxResults = min(q.MaxResults, MaxMaxResults)
	q.Window = min(max(q.Window, 0), 8)
	return nil
}

// params are the ranking's weights, chosen on LoCoMo (README).
type params struct {
	rrfK          float64
	lexWeight     float64
	vecWeight     float64
	neighborBoost float64 // a message after a match
	nextBoost     float64 // a message before a match
	k1, b         float64 // BM25
	// Pseudo-relevance feedback: the best terms of the first pass's top
	// prfDocs documents join the query with prfWeight.
	prfDocs, prfTerms int
	prfWeight         float64
	// prfMix weighs the feedback pass against the first pass: the first
	// keeps the head of the ranking sharp, the second reaches deeper.
	prfMix float64
}

// mergeLex adds the feedback pass's scaled scores to the first pass's.
func mergeLex(first, second []lexHit, mix float64) []lexHit {
	if len(second) == 0 {
		return first
	}
	m := make(map[uint32]*lexHit, len(first)+len(second))
	var out []lexHit
	for _, h := range first {
		out = append(out, lexHit{doc: h.doc, score: h.score / first[0].score, cover: h.cover})
	}
	for i := range out {
		m[out[i].doc] = &out[i]
	}
	var extra []lexHit
	for _, h := range second {
		s := float32(mix) * h.score / second[0].score
		if e, ok := m[h.doc]; ok {
			e.score += s
		} else {
			extra = append(extra, lexHit{doc: h.doc, score: s, cover: h.cover})
		}
	}
	out = append(out, extra...)
	slices.SortFunc(out, func(a, b lexHit) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return int(a.doc) - int(b.doc)
	})
	return out
}

// defaultParams were chosen on LoCoMo's development file (README has the
// ablation): BM25 with a low length normalisation (short chat lines),
// score fusion with a light vector weight (the built-in embedder mostly
// re-finds what BM25 found; a model embedder gets more, see
// Options.VectorWeight), a boost for the line after a match (answers
// follow questions) and one feedback round.
var defaultParams = params{
	lexWeight: 1, vecWeight: 0.1, neighborBoost: 0.4, nextBoost: 0.05,
	k1: 1.2, b: 0.3, prfDocs: 5, prfTerms: 10, prfWeight: 0.3, prfMix: 0.5,
}

// scored is a candidate message.
type scored struct {
	doc   uint32
	rank  float64 // the fused ranking score
	score float64 // the 0–100 display score
}

// Search runs plain ranked retrieval.
func (x *Index) Search(ctx context.Context, q Query) (*Response, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	return x.search(ctx, q)
}

func (x *Index) search(ctx context.Context, q Query) (*Response, error) {
	resp := &Response{Results: []Result{}}
	q.Window = max(q.Window, 0)
	terms := Tokenize(q.Prompt)
	holder := x.vecs.Load()
	useVec := x.vecReady.Load()
	var qv []float32
	if useVec {
		// A remote embedder that hangs must not hold the answer: words
		// alone answer after queryEmbedTimeout.
		ectx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
		vs, err := x.emb.Embed(ectx, []string{q.Prompt})
		cancel()
		if err != nil || len(vs) != 1 {
			useVec = false
			resp.Note = joinNote(resp.Note, fmt.Sprintf("lexical only: the embedder failed (%v)", err))
		} else {
			qv = vs[0]
		}
	}
	if !x.lexReady.Load() {
		resp.Note = joinNote(resp.Note, fmt.Sprintf("the index is still loading (%d of %d messages read); some messages may be missing", max(x.lexCur.Load(), x.scanned.Load()), x.st.LastArrival()))
	} else if !x.vecReady.Load() {
		resp.Note = joinNote(resp.Note, "lexical only: the vector index is still loading")
	} else if x.embCur.Load() < x.st.LastArrival() && x.st.LastArrival()-x.embCur.Load() > 100 {
		resp.Note = joinNote(resp.Note, fmt.Sprintf("embedding in progress (%d of %d messages): the newest are found by words only", x.embCur.Load(), x.st.LastArrival()))
	}

	c := x.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	var chans []string
	chFilter := int64(-1)
	if q.Channel != "" {
		ch, ok := c.chIdx[q.Channel]
		if !ok {
			// No message of the channel yet; shared records may still fit.
			resp.Results = mergeRecords(resp.Results, x.searchRecords(q, terms, qv), q.MaxResults)
			return resp, nil
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
	var expand func([]lexHit) map[string]float64
	if x.p.prfDocs > 0 {
		expand = func(first []lexHit) map[string]float64 { return x.expansion(terms, first) }
	}
	lex, fed := c.lex.search(terms, pool, keep, x.p.k1, x.p.b, expand)
	if len(fed) > 0 {
		lex = mergeLex(lex, fed, x.p.prfMix)
	}
	resp.Lexical = true
	var vec []vecHit
	if useVec && len(qv) > 0 {
		var err error
		vec, err = holder.idx.search(ctx, qv, pool, chans, keep)
		if err != nil {
			return nil, err
		}
		resp.Vector = true
	}
	cands := x.p.fuse(lex, vec)
	x.boostNeighbors(cands)
	resp, err := x.windows(ctx, q, cands, resp)
	if err != nil {
		return nil, err
	}
	resp.Results = mergeRecords(resp.Results, x.searchRecords(q, terms, qv), q.MaxResults)
	return resp, nil
}

// expansion picks feedback terms (RM3-like): each term of the top
// documents weighs its share of the document times the document's score,
// times its IDF; the best prfTerms not already asked for join the query.
// The caller holds c.mu.
func (x *Index) expansion(query []string, top []lexHit) map[string]float64 {
	c := x.c
	asked := map[string]bool{}
	for _, t := range query {
		asked[t] = true
	}
	N := float64(len(c.docs))
	best := float64(top[0].score)
	weights := map[string]float64{}
	for _, h := range top[:min(len(top), x.p.prfDocs)] {
		m, err := x.st.Get(c.docs[h.doc].id.String())
		if err != nil {
			continue
		}
		ts := Tokenize(docText(m))
		for _, t := range ts {
			if asked[t] {
				continue
			}
			id, ok := c.lex.terms[t]
			if !ok {
				continue
			}
			df := float64(len(c.lex.posts[id]))
			idf := math.Log(1 + (N-df+0.5)/(df+0.5))
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
	for _, e := range list[:min(len(list), x.p.prfTerms)] {
		out[e.t] = x.p.prfWeight * e.w / top1
	}
	return out
}

// fuse merges the two rankings. The ranking score is a weighted sum of
// each side's score scaled to its best candidate (BM25 / the best BM25;
// the cosine above the pool's floor / the best one's); measured on LoCoMo
// it beats reciprocal-rank fusion, which lets a weak side's ranks count as
// much as a strong side's (README). The display score is the share of the
// query's weight the message holds (lexical) averaged with its cosine.
func (p params) fuse(lex []lexHit, vec []vecHit) map[uint32]*scored {
	out := make(map[uint32]*scored, len(lex)+len(vec))
	get := func(d uint32) *scored {
		s := out[d]
		if s == nil {
			s = &scored{doc: d}
			out[d] = s
		}
		return s
	}
	vecOn := len(vec) > 0
	if len(lex) > 0 {
		top := float64(lex[0].score)
		for i, h := range lex {
			s := get(h.doc)
			if p.rrfK > 0 {
				s.rank += p.lexWeight / (p.rrfK + float64(i+1))
			} else {
				s.rank += p.lexWeight * float64(h.score) / top
			}
			if vecOn {
				s.score += 50 * float64(h.cover)
			} else {
				s.score += 100 * float64(h.cover)
			}
		}
	}
	if vecOn {
		top, floor := float64(vec[0].sim), float64(vec[len(vec)-1].sim)
		span := math.Max(top-floor, 1e-6)
		for i, h := range vec {
			s := get(h.doc)
			if p.rrfK > 0 {
				s.rank += p.vecWeight / (p.rrfK + float64(i+1))
			} else {
				s.rank += p.vecWeight * (float64(h.sim) - floor) / span
			}
			s.score += 50 * math.Max(0, float64(h.sim))
		}
	}
	for _, s := range out {
		s.score = math.Min(100, math.Round(s.score*10)/10)
	}
	return out
}

// boostNeighbors raises a candidate next to another candidate: an answer
// usually sits beside the line that matched the question's words. The
// caller holds c.mu.
func (x *Index) boostNeighbors(cands map[uint32]*scored) {
	c := x.c
	base := make(map[uint32]float64, len(cands))
	for d, s := range cands {
		base[d] = s.rank
	}
	for d, s := range cands {
		o := c.order[c.docs[d].ch]
		p := c.position(d)
		if p > 0 {
			s.rank += x.p.neighborBoost * base[o[p-1]] // d answers a match
		}
		if p+1 < len(o) {
			s.rank += x.p.nextBoost * base[o[p+1]] // d leads to a match
		}
	}
}

// windows turns ranked candidates into results: each hit with its
// neighbours, hits whose windows touch merged into one passage, until
// MaxResults passages pass the threshold. The caller holds c.mu.
func (x *Index) windows(ctx context.Context, q Query, cands map[uint32]*scored, resp *Response) (*Response, error) {
	c := x.c
	ranked := make([]*scored, 0, len(cands))
	for _, s := range cands {
		if s.score >= max(q.ScoreThreshold, minScore) {
			ranked = append(ranked, s)
		}
	}
	slices.SortFunc(ranked, func(a, b *scored) int {
		switch {
		case a.rank > b.rank:
			return -1
		case a.rank < b.rank:
			return 1
		}
		return int(a.doc) - int(b.doc)
	})
	type span struct {
		ch         uint32
		lo, hi     int // positions, inclusive
		hits       []uint32
		score      float64
		firstOrder int
	}
	var spans []*span
	maxSpan := 2*q.Window + 1 + maxMerge
	for _, s := range ranked {
		if len(spans) >= q.MaxResults {
			break
		}
		ch := c.docs[s.doc].ch
		p := c.position(s.doc)
		lo, hi := max(0, p-q.Window), min(len(c.order[ch])-1, p+q.Window)
		placed := false
		for _, sp := range spans {
			if sp.ch != ch || lo > sp.hi+1 || hi < sp.lo-1 {
				continue
			}
			if p >= sp.lo && p <= sp.hi {
				// Already shown inside this passage.
				sp.hits = append(sp.hits, s.doc)
				sp.score = math.Max(sp.score, s.score)
				placed = true
				break
			}
			if max(sp.hi, hi)-min(sp.lo, lo)+1 <= maxSpan {
				sp.lo, sp.hi = min(sp.lo, lo), max(sp.hi, hi)
				sp.hits = append(sp.hits, s.doc)
				sp.score = math.Max(sp.score, s.score)
				placed = true
				break
			}
			// Too long to merge: this hit starts its own passage, clipped so
			// that passages never overlap.
			if p > sp.hi {
				lo = max(lo, sp.hi+1)
			} else {
				hi = min(hi, sp.lo-1)
			}
		}
		if !placed {
			spans = append(spans, &span{ch: ch, lo: lo, hi: hi, hits: []uint32{s.doc}, score: s.score, firstOrder: len(spans)})
		}
	}
	for _, sp := range spans {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o := c.order[sp.ch]
		r := Result{Kind: KindMessages, Channel: c.chans[sp.ch], Score: sp.score, MessageIDs: []string{}, ExternalIDs: []string{}, Hits: []string{}}
		hit := map[uint32]bool{}
		for _, h := range sp.hits {
			hit[h] = true
			r.Hits = append(r.Hits, c.docs[h].id.String())
		}
		var lines []string
		for p := sp.lo; p <= sp.hi; p++ {
			d := o[p]
			m, err := x.st.Get(c.docs[d].id.String())
			if err != nil {
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				return nil, err
			}
			if len(r.MessageIDs) == 0 {
				r.From = m.Time
			}
			r.To = m.Time
			r.MessageIDs = append(r.MessageIDs, m.ID)
			r.ExternalIDs = append(r.ExternalIDs, m.ExternalID)
			speaker := m.User
			if speaker == "" {
				speaker = string(m.Role)
			}
			lines = append(lines, fmt.Sprintf("message%d:%s:%s", p+1, speaker, m.Text))
		}
		if len(r.MessageIDs) == 0 {
			continue
		}
		r.Text = strings.Join(lines, "\n")
		r.Source = "history/" + r.Channel + "/" + r.From.Format("2006-01-02")
		if sp.lo == sp.hi {
			r.Location = fmt.Sprintf("message %d", sp.lo+1)
		} else {
			r.Location = fmt.Sprintf("message %d ~ message %d", sp.lo+1, sp.hi+1)
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
