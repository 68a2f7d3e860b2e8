package recall

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/importer"
	"github.com/cyan-agent/cyan/store"
)

// Cross-validation over LoCoMo conversations: the knobs of params are
// tuned on some conversations and measured on the others, so a number
// says how recall does on talk its settings never saw.
//
// All the conversations share one store and one index, each in its own
// channel, as in a user's store and in `cyan bench locomo FILE`; a
// question is asked of its conversation's channel (LoCoMo's protocol: of
// its conversation's turns). The index is built once; each question's costly
// searches (gather) run once; every setting of the knobs then only re-ranks
// (rank), so a fold's whole tuning costs a fraction of one search pass.

// knob is one part of the ranking that cross-validation may tune: its
// name, the values it may take and where it lives in params. A tuned
// knob's first value is its part off (for BM25's b and k1, the textbook
// value); an untuned knob stays at its first value, off, and the ablation
// tries its second. A gather knob changes the
// searches themselves, so each of its values has its own gathered
// features; the others only re-rank.
type knob struct {
	Name   string
	Values []float64
	Gather bool
	// Tuned knobs are tuned by the shipped procedure; the others stay at
	// their first value: BM25's textbook k1, the speaker boost at 1 (a
	// prior: tuned, it lifted R@5 but cost open-domain questions their BM25
	// floor), and off the parts that did not help held-out recall (the
	// date boost, session diversity, the fill: it raised held-out R@25
	// and R@50 by words alone, but added nothing beside the built-in
	// embedder's vectors, which find the same lines). docs/memory.md has
	// the ablation.
	Tuned bool
	set   func(*params, float64)
}

// knobs are tuned in this order, each over its few values.
var knobs = []knob{
	{"bm25-b", []float64{0.75, 0.5, 0.3}, true, true, func(p *params, v float64) { p.b = v }},
	{"bm25-k1", []float64{1.2, 0.9}, true, false, func(p *params, v float64) { p.k1 = v }},
	{"expand", []float64{0, 0.25, 0.5, 1}, false, true, func(p *params, v float64) { p.expand = v }},
	{"context", []float64{0, 0.2, 0.4, 0.6, 0.8}, false, true, func(p *params, v float64) { p.context = v }},
	{"route", []float64{0, 0.2, 0.4, 0.8, 1.6}, false, true, func(p *params, v float64) { p.route = v }},
	{"when", []float64{0, 0.25, 0.5, 1, 2}, false, true, func(p *params, v float64) { p.when = v }},
	{"dated", []float64{0, 1}, false, false, func(p *params, v float64) { p.dated = v }},
	{"speaker", []float64{1, 0}, false, false, func(p *params, v float64) { p.speaker = v }},
	{"diversity", []float64{0, 0.1}, false, false, func(p *params, v float64) { p.diversity = v }},
	{"vector", []float64{0, 0.1, 0.2, 0.4}, false, true, func(p *params, v float64) { p.vecWeight = v }},
	{"fill", []float64{0, 0.5}, false, false, func(p *params, v float64) { p.fill = v }},
	{"channel-stats", []float64{0, 1}, true, true, func(p *params, v float64) { p.storeStats = v == 0 }},
	{"kinds", []float64{0, 0.2, 0.4, 0.8, 1.6}, false, true, func(p *params, v float64) { p.kinds = v }},
}

// newParts name the knobs of the parts this release added, and newTokens
// says that it changed the tokenizer (the irregular verbs): the report's
// "before" is the same procedure with those parts held off, over an
// index tokenized as before, the previous release's ranking measured the
// same way.
var (
	newParts  []string
	newTokens = true
)

// harshTrain is how many conversations each split of the harsher check
// tunes on (all the others are held out).
const harshTrain = 2

// nKnobs is len(knobs).
const nKnobs = 13

// setting is a choice of value for every knob (indexes into Values).
type setting [nKnobs]uint8

// knobSet says which knobs a tuning may move.
type knobSet [nKnobs]bool

func (s setting) params(base params) params {
	for i, k := range knobs {
		k.set(&base, k.Values[s[i]])
	}
	return base
}

// gatherIndex numbers the setting's values of the gather knobs (the
// features it ranks).
func (s setting) gatherIndex() int {
	n, mul := 0, 1
	for i, k := range knobs {
		if k.Gather {
			n += int(s[i]) * mul
			mul *= len(k.Values)
		}
	}
	return n
}

// gatherSettings lists one setting per combination of gather knob values
// (the rank knobs off), in gatherIndex order.
func gatherSettings() []setting {
	out := []setting{{}}
	for i, k := range knobs {
		if !k.Gather {
			continue
		}
		var next []setting
		for v := range k.Values {
			for _, s := range out {
				s[i] = uint8(v)
				next = append(next, s)
			}
		}
		out = next
	}
	return out
}

func (s setting) String() string {
	var b strings.Builder
	for i, k := range knobs {
		if k.Values[s[i]] == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%g", k.Name, k.Values[s[i]])
	}
	if b.Len() == 0 {
		return "(all off)"
	}
	return b.String()
}

// Folds splits n conversations into k folds by position (conversation i
// is held out in fold i mod k) and returns, per fold, the conversations
// held out and those tuned on. No conversation is in both lists of a fold,
// and each is held out exactly once.
func Folds(n, k int) (test, train [][]int, err error) {
	if k < 2 || k > n {
		return nil, nil, fmt.Errorf("recall: %d folds over %d conversations: use 2 to %d folds", k, n, n)
	}
	test, train = make([][]int, k), make([][]int, k)
	for i := range n {
		for f := range k {
			if i%k == f {
				test[f] = append(test[f], i)
			} else {
				train[f] = append(train[f], i)
			}
		}
	}
	return test, train, nil
}

// scorer gives, for a conversation and a setting, every question's recall
// at each k. crossValidate asks it about the training conversations while
// tuning and about the held-out ones only to measure.
type scorer interface {
	conversations() int
	score(conv int, s setting) [][]float64 // [question][k]
}

// tuneResult is a fold's choice.
type tuneResult struct {
	setting   setting
	objective float64 // mean recall over the ks on the training questions
}

// tune picks a setting on the train conversations alone: coordinate
// ascent from all knobs off, knob by knob in order, two sweeps, keeping a
// value only when it raises the mean of recall@k over the ks (pooled over
// the training questions). It starts from start; knobs not in allowed
// keep start's value.
func tune(sc scorer, train []int, allowed knobSet, start setting) tuneResult {
	objective := func(s setting) float64 {
		var sum float64
		var n int
		for _, c := range train {
			for _, q := range sc.score(c, s) {
				for _, r := range q {
					sum += r
				}
				n += len(q)
			}
		}
		return sum / float64(max(n, 1))
	}
	cur := start
	best := objective(cur)
	for range 2 {
		changed := false
		for i, k := range knobs {
			if !allowed[i] {
				continue
			}
			for v := range k.Values {
				if uint8(v) == cur[i] {
					continue
				}
				try := cur
				try[i] = uint8(v)
				if o := objective(try); o > best+1e-9 {
					best, cur, changed = o, try, true
				}
			}
		}
		if !changed {
			break
		}
	}
	return tuneResult{setting: cur, objective: best}
}

// cvFold is one fold's outcome.
type cvFold struct {
	test, train []int
	tuned       tuneResult
	scores      [][][]float64 // per held-out conversation: [question][k]
}

// crossValidate tunes on each fold's training conversations and scores
// its held-out ones with that choice.
func crossValidate(sc scorer, k int, allowed knobSet, start setting) ([]cvFold, error) {
	test, train, err := Folds(sc.conversations(), k)
	if err != nil {
		return nil, err
	}
	return validate(sc, test, train, allowed, start), nil
}

// validate tunes on each split's training conversations and scores its
// held-out ones with that choice.
func validate(sc scorer, test, train [][]int, allowed knobSet, start setting) []cvFold {
	out := make([]cvFold, len(test))
	for f := range test {
		t := tune(sc, train[f], allowed, start)
		out[f] = cvFold{test: test[f], train: train[f], tuned: t}
		for _, c := range test[f] {
			out[f].scores = append(out[f].scores, sc.score(c, t.setting))
		}
	}
	return out
}

// Splits lists every way to tune on k of n conversations and hold out the
// other n-k: a harsher test than the folds when k is small, as each tuning
// sees few conversations. The splits come in the lexicographic order of
// their training sets; each conversation is held out in C(n-1, k) of them.
func Splits(n, k int) (test, train [][]int, err error) {
	if k < 1 || k >= n {
		return nil, nil, fmt.Errorf("recall: tuning on %d of %d conversations: use 1 to %d", k, n, n-1)
	}
	var walk func(from int, picked []int)
	walk = func(from int, picked []int) {
		if len(picked) == k {
			tr := slices.Clone(picked)
			var te []int
			for i := range n {
				if !slices.Contains(tr, i) {
					te = append(te, i)
				}
			}
			test, train = append(test, te), append(train, tr)
			return
		}
		for i := from; i < n; i++ {
			walk(i+1, append(picked, i))
		}
	}
	walk(0, nil)
	return test, train, nil
}

// locomoScorer scores settings on LoCoMo conversations, each in its own
// channel of one index, with every question's searches done once.
type locomoScorer struct {
	st    *store.Store
	convs []*convIndex
	ks    []int
	memo  map[memoKey][][]float64
	base  params
	evals int
}

type memoKey struct {
	conv int
	s    setting
}

type convIndex struct {
	conv  importer.Conversation
	x     *Index   // shared by all the conversations
	ext   []string // doc → dia id, shared
	qs    []Query
	feats [][]*features // [gatherIndex][question]
}

// newLocomoScorer is a scorer at the shipped defaults, to build.
func newLocomoScorer(ks []int) *locomoScorer {
	return &locomoScorer{ks: ks, memo: map[memoKey][][]float64{}, base: defaultParams}
}

// close closes the store build opened, if it did.
func (l *locomoScorer) close() {
	if l.st != nil {
		l.st.Close()
	}
}

func (l *locomoScorer) conversations() int { return len(l.convs) }

func (l *locomoScorer) score(conv int, s setting) [][]float64 {
	key := memoKey{conv, s}
	if r, ok := l.memo[key]; ok {
		return r
	}
	l.evals++
	ci := l.convs[conv]
	p := s.params(l.base)
	kmax := l.ks[len(l.ks)-1]
	out := make([][]float64, len(ci.qs))
	ci.x.c.mu.RLock()
	for i, q := range ci.qs {
		turns := ci.turns(q, ci.feats[s.gatherIndex()][i], p, kmax)
		out[i] = make([]float64, len(l.ks))
		for j, k := range l.ks {
			out[i][j] = recallAt(turns, ci.conv.QA[i].Evidence, k)
		}
	}
	ci.x.c.mu.RUnlock()
	l.memo[key] = out
	return out
}

// turns ranks with p and flattens the passages search would return into
// their first k distinct turns. The caller holds c.mu.
func (ci *convIndex) turns(q Query, f *features, p params, k int) []string {
	x := ci.x
	var out []string
	for _, sp := range x.spans(q, f.rank(p)) {
		o := x.c.order[sp.ch]
		for at := sp.lo; at <= sp.hi && len(out) < k; at++ {
			out = append(out, ci.ext[o[at]])
		}
	}
	return out
}

// LoCoMoCVOptions configure LoCoMoCV.
type LoCoMoCVOptions struct {
	Folds int
	Ks    []int
	// Embedder makes each conversation's embedder (nil: the built-in one).
	Embedder func() Embedder
}

// CVRow is recall@k (×100) over a set of questions, per k, overall and
// per category.
type CVRow struct {
	Questions  int
	Overall    []float64
	ByCategory map[int][]float64
	Count      map[int]int
}

// CVFoldReport is one fold: what it held out, what its tuning chose, and
// how the choice did on the held-out questions.
type CVFoldReport struct {
	HeldOut []string
	Setting string
	Row     CVRow
}

// CVReport is LoCoMoCV's answer.
type CVReport struct {
	Ks        []int
	Folds     []CVFoldReport
	Pooled    CVRow // every question, scored by the fold that held it out
	FoldMean  []float64
	FoldSD    []float64
	FoldMin   []float64
	InSample  CVRow // tuned and measured on every conversation
	InSampleS string
	// Shipped says whether the in-sample choice is the ranking search runs
	// (defaultParams): what ships is what the procedure picks on all the
	// conversations.
	Shipped bool
	BM25    CVRow // the data's BM25 baseline: the floor per category
	// Before is the pooled held-out recall of the previous release's
	// ranking, by the same folds and procedure: the parts added since
	// (BeforeOff) held off.
	Before    CVRow
	BeforeOff []string
	// The harsher check: each of HarshSplits splits tunes on HarshTrain
	// conversations and is measured on all the others; Harsh pools every
	// held-out question of every split (each conversation is held out in
	// as many splits), HarshBefore the same with the previous release's
	// parts. HarshSplits is 0 when there are too few conversations.
	HarshTrain, HarshSplits int
	Harsh, HarshBefore      CVRow
	// Ablation: the pooled held-out recall of the procedure "without" a
	// part it tunes or "with" a part it leaves off (ablationName), and
	// "none": every part off (BM25 at the textbook b and k1, no feedback,
	// no boosts).
	Ablation map[string]CVRow
	Index    time.Duration // building the indexes and gathering every question
	Tuning   time.Duration
	Evals    int // settings scored on one conversation
}

// LoCoMoCV cross-validates the ranking's knobs on a LoCoMo file: o.Folds
// folds by conversation, each tuned on the others and measured on its
// own; plus the in-sample number (tuned and measured on all, to show the
// gap), the data's BM25 baseline, and the ablation.
func LoCoMoCV(ctx context.Context, data []byte, o LoCoMoCVOptions) (*CVReport, error) {
	convs, err := importer.ParseLoCoMo(data, "")
	if err != nil {
		return nil, err
	}
	if o.Folds < 2 || o.Folds > len(convs) {
		return nil, fmt.Errorf("recall: --folds %d over %d conversations: use 2 to %d", o.Folds, len(convs), len(convs))
	}
	ks := slices.Clone(o.Ks)
	slices.Sort(ks)
	if o.Embedder == nil {
		o.Embedder = func() Embedder { return GloveEmbedder{} }
	}
	began := time.Now()
	sc := newLocomoScorer(ks)
	defer sc.close()
	if err := sc.build(ctx, convs, o.Embedder(), false); err != nil {
		return nil, err
	}
	rep := &CVReport{Ks: ks, Index: time.Since(began), Ablation: map[string]CVRow{}}
	began = time.Now()
	var tuned knobSet
	for i, k := range knobs {
		tuned[i] = k.Tuned
	}
	folds, err := crossValidate(sc, o.Folds, tuned, setting{})
	if err != nil {
		return nil, err
	}
	rep.Pooled = pool(sc, folds, ks)
	for _, f := range folds {
		var held []string
		for _, c := range f.test {
			held = append(held, convs[c].SampleID)
		}
		rep.Folds = append(rep.Folds, CVFoldReport{HeldOut: held, Setting: f.tuned.setting.String(), Row: pool(sc, []cvFold{f}, ks)})
	}
	rep.FoldMean, rep.FoldSD, rep.FoldMin = foldStats(rep.Folds, ks)
	everything := make([]int, len(convs))
	for i := range everything {
		everything[i] = i
	}
	in := tune(sc, everything, tuned, setting{})
	rep.InSampleS = in.setting.String()
	rep.Shipped = in.setting.params(defaultParams) == defaultParams
	rep.InSample = pool(sc, []cvFold{{test: everything, scores: scoresOf(sc, everything, in.setting)}}, ks)
	for i, k := range knobs {
		set, start := tuned, setting{}
		if k.Tuned {
			set[i] = false
		} else {
			start[i] = 1 // the part on
		}
		fs, err := crossValidate(sc, o.Folds, set, start)
		if err != nil {
			return nil, err
		}
		rep.Ablation[ablationName(k)] = pool(sc, fs, ks)
	}
	var none setting // every part off: each knob at its 0 if it has one
	for i, k := range knobs {
		if at := slices.Index(k.Values, 0); at >= 0 {
			none[i] = uint8(at)
		}
	}
	fs, err := crossValidate(sc, o.Folds, knobSet{}, none)
	if err != nil {
		return nil, err
	}
	rep.Ablation["none"] = pool(sc, fs, ks)
	// The release before: its knobs (the new parts held off), over an
	// index that tokenizes as it did when this release changed the
	// tokenizer.
	before, prev := tuned, sc
	for i, k := range knobs {
		if slices.Contains(newParts, k.Name) {
			before[i] = false
			rep.BeforeOff = append(rep.BeforeOff, k.Name)
		}
	}
	if newTokens {
		prev = newLocomoScorer(ks)
		defer prev.close()
		if err := prev.build(ctx, convs, o.Embedder(), true); err != nil {
			return nil, err
		}
		rep.BeforeOff = append(rep.BeforeOff, "irregular verbs")
	}
	fs, err = crossValidate(prev, o.Folds, before, setting{})
	if err != nil {
		return nil, err
	}
	rep.Before = pool(prev, fs, ks)
	if len(convs) > harshTrain+1 {
		test, train, err := Splits(len(convs), harshTrain)
		if err != nil {
			return nil, err
		}
		rep.HarshTrain, rep.HarshSplits = harshTrain, len(test)
		rep.Harsh = pool(sc, validate(sc, test, train, tuned, setting{}), ks)
		rep.HarshBefore = pool(prev, validate(prev, test, train, before, setting{}), ks)
	}
	rep.Tuning = time.Since(began)
	rep.Evals = sc.evals
	rep.BM25 = bm25Baseline(convs, ks)
	return rep, nil
}

// ablationName is a knob's row in the ablation: the shipped procedure
// without a part it tunes (the knob at its first value, off), or with a
// part it leaves off (the knob at its second value).
func ablationName(k knob) string {
	if k.Tuned {
		return "without " + k.Name
	}
	return fmt.Sprintf("with %s = %g", k.Name, k.Values[1])
}

func scoresOf(sc scorer, convs []int, s setting) [][][]float64 {
	var out [][][]float64
	for _, c := range convs {
		out = append(out, sc.score(c, s))
	}
	return out
}

// build imports every conversation into its own channel of one in-memory
// store, indexes them, and runs each question's searches in its
// conversation's channel.
func (l *locomoScorer) build(ctx context.Context, convs []importer.Conversation, emb Embedder, regularVerbs bool) error {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		return err
	}
	l.st = st
	for _, c := range convs {
		if _, err := st.Import(c.Messages); err != nil {
			return err
		}
	}
	x, err := New(Options{Store: st, Embedder: emb, regularVerbs: regularVerbs})
	if err != nil {
		return err
	}
	x.vecOff = false // the ablation tries the vectors whatever the shipped weight
	if err := x.Sync(ctx); err != nil {
		return err
	}
	ext := make([]string, len(x.c.docs))
	for d, m := range x.c.docs {
		msg, err := st.Get(m.id.String())
		if err != nil {
			return err
		}
		ext[d] = msg.ExternalID
	}
	gs := gatherSettings()
	for _, c := range convs {
		ci := &convIndex{conv: c, x: x, ext: ext, feats: make([][]*features, len(gs))}
		for _, qa := range c.QA {
			q := Query{Prompt: qa.Question, Channel: c.Channel, MaxResults: MaxMaxResults}
			if err := q.check(); err != nil {
				return fmt.Errorf("recall: %s: question %q: %w", c.SampleID, qa.Question, err)
			}
			// The question's vector is made whatever the shipped vector
			// weight: the ablation tries the vectors too.
			vs, err := x.emb.Embed(ctx, []string{q.Prompt})
			if err != nil || len(vs) != 1 {
				return fmt.Errorf("recall: %s: embed question %q: %v", c.SampleID, qa.Question, err)
			}
			qv := vs[0]
			if zeroVector(qv) {
				qv = nil // as search: no vector evidence
			}
			// The kinds are found whatever the kinds weight: at 0, rank
			// leaves them out.
			a := asked{terms: x.c.stems.tokens(q.Prompt), qv: qv}
			a.kinds, a.class = questionKinds(q.Prompt, a.terms)
			x.c.mu.RLock()
			for g, s := range gs {
				// The sessions' lines are gathered whatever the fill
				// weight: at 0, rank leaves them out.
				gp := s.params(l.base)
				gp.fill = 1
				gp.kinds = 1
				f, _ := x.gather(ctx, q, a, gp)
				if f == nil || f.err != nil {
					x.c.mu.RUnlock()
					return fmt.Errorf("recall: %s: question %q: search failed", c.SampleID, qa.Question)
				}
				ci.feats[g] = append(ci.feats[g], f)
			}
			x.c.mu.RUnlock()
			ci.qs = append(ci.qs, q)
		}
		l.convs = append(l.convs, ci)
	}
	return nil
}

// pool averages recall over the folds' held-out questions.
func pool(sc *locomoScorer, folds []cvFold, ks []int) CVRow {
	row := CVRow{Overall: make([]float64, len(ks)), ByCategory: map[int][]float64{}, Count: map[int]int{}}
	for _, f := range folds {
		for i, c := range f.test {
			for qi, r := range f.scores[i] {
				cat := sc.convs[c].conv.QA[qi].Category
				if row.ByCategory[cat] == nil {
					row.ByCategory[cat] = make([]float64, len(ks))
				}
				row.Count[cat]++
				row.Questions++
				for j := range ks {
					row.Overall[j] += r[j]
					row.ByCategory[cat][j] += r[j]
				}
			}
		}
	}
	for j := range ks {
		row.Overall[j] = 100 * row.Overall[j] / float64(max(row.Questions, 1))
		for c, v := range row.ByCategory {
			v[j] = 100 * v[j] / float64(max(row.Count[c], 1))
		}
	}
	return row
}

func foldStats(folds []CVFoldReport, ks []int) (mean, sd, lo []float64) {
	mean, sd, lo = make([]float64, len(ks)), make([]float64, len(ks)), make([]float64, len(ks))
	for j := range ks {
		lo[j] = math.Inf(1)
		for _, f := range folds {
			mean[j] += f.Row.Overall[j]
			lo[j] = min(lo[j], f.Row.Overall[j])
		}
		mean[j] /= float64(len(folds))
		for _, f := range folds {
			d := f.Row.Overall[j] - mean[j]
			sd[j] += d * d
		}
		if len(folds) > 1 {
			sd[j] = math.Sqrt(sd[j] / float64(len(folds)-1))
		}
	}
	return mean, sd, lo
}
