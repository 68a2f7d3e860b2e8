package recall

import (
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/cyan-agent/cyan/journal"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cyan-agent/cyan/packets"
)

// Kinds of a Result.
const (
	KindMessages = "messages" // a passage of a channel's chat log
	// A record's hit has its kind: packets.RecordEvent, packets.RecordTheory.
)

// Records is where the records come from; the daemon passes the event
// log's.
type Records interface {
	// Records lists every record to index. Run reads them again after
	// each journal.RecordsChanged.
	Records(ctx context.Context) ([]packets.Record, error)
}

// recordPart bounds a part of a record's text: a long article is indexed
// and shown as runs of whole lines of about this many bytes, each with its
// "line n ~ line m" location, so a hit shows the lines that matched, not
// 64k characters.
const recordPart = 800

// recDoc is one indexed part of a record.
type recDoc struct {
	rec  *packets.Record
	loc  string
	text string
	t    int64
	vec  []float32 // nil: not embedded (the embedder failed)
}

// key identifies the part across rebuilds (tool mode's exclusions).
func (d *recDoc) key() string { return d.rec.Kind + "\x00" + d.rec.ID + "\x00" + d.loc }

// recordIndex is the records' side of the index: small (thousands of
// records, not millions of messages), rebuilt whole when records change,
// with a lexicon of its own so that messages' BM25 statistics stay as
// they are.
type recordIndex struct {
	docs []recDoc
	lex  *lexicon
}

// splitRecord cuts a record's text into parts of whole lines.
func splitRecord(r *packets.Record) []recDoc {
	t := r.Time.UnixMilli()
	text := strings.TrimSpace(r.Text)
	if text == "" {
		return nil
	}
	if len(text) <= recordPart {
		return []recDoc{{rec: r, text: text, t: t}}
	}
	lines := strings.Split(text, "\n")
	var out []recDoc
	for i := 0; i < len(lines); {
		j, size := i, 0
		for j < len(lines) && (j == i || size+len(lines[j]) <= recordPart) {
			size += len(lines[j]) + 1
			j++
		}
		part := strings.TrimSpace(strings.Join(lines[i:j], "\n"))
		if part != "" {
			loc := fmt.Sprintf("line %d", i+1)
			if j-1 > i {
				loc = fmt.Sprintf("line %d ~ line %d", i+1, j)
			}
			out = append(out, recDoc{rec: r, loc: loc, text: part, t: t})
		}
		i = j
	}
	return out
}

// recText is what the index reads of a part: its source (the event's date,
// the theory's title), its text and its month.
func recText(d *recDoc) string {
	return d.rec.Source + " " + d.text + " " + d.rec.Time.Format("January 2006")
}

// recordState is the Index's records side.
type recordState struct {
	mu    sync.Mutex // one rebuild at a time
	cache map[[32]byte][]float32
	count atomic.Int64 // records in the current index
	// synced is the journal's last event when the current index read the
	// records: a RecordsChanged after it means the index is behind.
	synced atomic.Uint64
}

// syncIfBehind rebuilds the records' side now when the records changed
// since it was built (a theory written a moment ago), so a topic matches
// it at once instead of after Run's next rebuild.
func (x *Index) syncIfBehind(ctx context.Context) {
	if x.o.Records == nil || x.st == nil {
		return
	}
	j := x.st.Journal()
	evs, err := j.Since(x.rs.synced.Load(), journal.Filter{Kinds: []journal.Kind{journal.RecordsChanged}}, 1)
	if err != nil || len(evs) == 0 {
		return
	}
	if err := x.SyncRecords(ctx); err != nil && ctx.Err() == nil {
		x.log.Warn("indexing event and theory texts for a topic failed; it is matched against the last index", "err", err)
	}
}

// SyncRecords rebuilds the records' side from Options.Records now (Run does
// it whenever they change). Texts embedded before are not embedded again;
// when the embedder fails, the records are found by words only until the
// next rebuild.
func (x *Index) SyncRecords(ctx context.Context) error {
	if x.o.Records == nil {
		return nil
	}
	x.rs.mu.Lock()
	defer x.rs.mu.Unlock()
	var seq uint64
	if x.st != nil {
		seq = x.st.Journal().Last()
	}
	recs, err := x.o.Records.Records(ctx)
	if err != nil {
		return fmt.Errorf("recall: read records: %w", err)
	}
	ri := &recordIndex{lex: newLexicon()}
	for i := range recs {
		ri.docs = append(ri.docs, splitRecord(&recs[i])...)
	}
	cache := make(map[[32]byte][]float32, len(ri.docs))
	var missing []int
	keys := make([][32]byte, len(ri.docs))
	for i := range ri.docs {
		d := &ri.docs[i]
		ri.lex.add(uint32(i), Tokenize(recText(d)))
		keys[i] = sha256.Sum256([]byte(x.emb.ID() + "\x00" + recText(d)))
		if v, ok := x.rs.cache[keys[i]]; ok {
			d.vec = v
			cache[keys[i]] = v
		} else {
			missing = append(missing, i)
		}
	}
	if x.vecOff {
		missing = nil // nobody reads their vectors
	}
	for start := 0; start < len(missing); start += x.embedBatch() {
		batch := missing[start:min(start+x.embedBatch(), len(missing))]
		texts := make([]string, len(batch))
		for k, i := range batch {
			texts[k] = recText(&ri.docs[i])
		}
		vs, _, err := embedIsolating(ctx, x.emb, texts)
		if err != nil || len(vs) != len(texts) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			x.log.Warn("embedding event and theory texts failed; they are found by words only until they change", "err", err)
			break
		}
		for k, i := range batch {
			if vs[k] == nil {
				continue // refused by the embedder: found by words only
			}
			v := slices.Clone(vs[k])
			normalize(v)
			ri.docs[i].vec = v
			cache[keys[i]] = v
		}
	}
	x.rs.cache = cache
	x.rs.count.Store(int64(len(recs)))
	x.recs.Store(ri)
	x.rs.synced.Store(seq)
	return nil
}

func (x *Index) recordCount() int { return int(x.rs.count.Load()) }

// recordVecOnly is how many records a model embedder or GloveEmbedder
// may add by meaning alone (no word in common with the query).
// HashEmbedder adds none: its vectors echo words, which BM25 has already
// matched.
const recordVecOnly = 3

// searchRecords finds the records' parts that fit q, best first, as
// results. The caller has checked q.
func (x *Index) searchRecords(q Query, terms []string, qv []float32) []Result {
	ri := x.recs.Load()
	if ri == nil || len(ri.docs) == 0 {
		return nil
	}
	since, until := int64(math.MinInt64), int64(math.MaxInt64)
	if !q.Since.IsZero() {
		since = q.Since.UnixMilli()
	}
	if !q.Until.IsZero() {
		until = q.Until.UnixMilli()
	}
	keep := func(i uint32) bool {
		d := &ri.docs[i]
		if q.Channel != "" && (d.rec.Channel != "" && d.rec.Channel != q.Channel || d.rec.OwnerOnly && !q.Owner) {
			return false
		}
		return d.t >= since && d.t < until && !q.excludeRecs[d.key()]
	}
	hits, _ := ri.lex.search(terms, max(50, 4*q.MaxResults), keep, nil, x.p.k1, x.p.b, nil)
	cover := map[uint32]float64{}
	for _, h := range hits {
		cover[h.doc] = float64(h.cover)
	}
	sims := make(map[uint32]float64, len(cover))
	if len(qv) > 0 {
		sim := func(i uint32) (float64, bool) {
			v := ri.docs[i].vec
			if len(v) != len(qv) {
				return 0, false
			}
			return float64(dot(qv, v)), true
		}
		for doc := range cover {
			if s, ok := sim(doc); ok {
				sims[doc] = s
			}
		}
		if !isBuiltin(x.emb) {
			// A model embedder's matches by meaning alone: the best few.
			top := newTopK(recordVecOnly)
			for i := range ri.docs {
				d := uint32(i)
				if _, hit := cover[d]; hit || !keep(d) {
					continue
				}
				if s, ok := sim(d); ok && (!top.full() || float32(s) > top.min()) {
					top.push(vecHit{doc: d, sim: float32(s)})
				}
			}
			for _, h := range top.items {
				cover[h.doc], sims[h.doc] = 0, float64(h.sim)
			}
		}
	}
	var out []Result
	for doc, cv := range cover {
		score := 100 * cv
		if len(qv) > 0 {
			score = 50*cv + 50*math.Max(0, sims[doc])
		}
		score = math.Min(100, math.Round(score*10)/10)
		if score < max(q.ScoreThreshold, minScore) {
			continue
		}
		d := &ri.docs[doc]
		t := d.rec.Time
		out = append(out, Result{Kind: d.rec.Kind, ID: d.rec.ID, Source: d.rec.Source, Location: d.loc, Text: d.text, Score: score,
			Channel: d.rec.Channel, MessageIDs: []string{}, ExternalIDs: []string{}, Hits: []string{}, From: t, To: t, key: d.key()})
	}
	slices.SortFunc(out, func(a, b Result) int {
		if c := cmpDesc(a.Score, b.Score); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	return out[:min(len(out), q.MaxResults)]
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// mergeRecords puts record results among the message passages by score:
// the passages keep their ranking order, and a record goes before the
// first passage that scores lower than it; then the list is cut to n.
func mergeRecords(passages, recs []Result, n int) []Result {
	if len(recs) == 0 {
		return passages
	}
	out := make([]Result, 0, min(n, len(passages)+len(recs)))
	i, j := 0, 0
	for len(out) < n && (i < len(passages) || j < len(recs)) {
		if j < len(recs) && (i == len(passages) || recs[j].Score > passages[i].Score) {
			out = append(out, recs[j])
			j++
		} else {
			out = append(out, passages[i])
			i++
		}
	}
	return out
}
