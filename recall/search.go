package recall

import (
	"context"
	"errors"
	"fmt"
	"math"
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
	// Kind is KindMessages, packets.RecordEvent or packets.RecordTheory.
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
	// Queries are what tool mode's rewrite added to the request.
	Queries []string `json:"queries,omitempty"`
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

// Search runs plain ranked retrieval.
func (x *Index) Search(ctx context.Context, q Query) (*Response, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	return sorted(x.search(ctx, q))
}

func (x *Index) search(ctx context.Context, q Query) (*Response, error) {
	resp := &Response{Results: []Result{}}
	q.Window = max(q.Window, 0)
	terms := x.c.stems.tokens(q.Prompt)
	qv := x.queryVector(ctx, q.Prompt, resp)
	a := asked{terms: terms, qv: qv}
	if x.p.kinds > 0 {
		a.kinds, a.class = questionKinds(q.Prompt, terms)
	}
	x.noteProgress(resp)

	c := x.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, known := x.gather(ctx, q, a, x.p)
	if !known {
		// No message of the channel yet; shared records may still fit.
		resp.Results = mergeRecords(resp.Results, x.searchRecords(q, terms, qv), q.MaxResults)
		return resp, nil
	}
	if f.err != nil {
		return nil, f.err
	}
	resp.Lexical, resp.Vector = true, f.vecOn
	ranked := f.rank(x.p)
	resp, err := x.windows(ctx, q, ranked, resp)
	if err != nil {
		return nil, err
	}
	resp.Results = mergeRecords(resp.Results, x.searchRecords(q, terms, qv), q.MaxResults)
	return resp, nil
}

// queryVector embeds the prompt when the vector side is ready; a failure
// leaves it out and says so in resp's note.
func (x *Index) queryVector(ctx context.Context, prompt string, resp *Response) []float32 {
	if !x.vecReady.Load() || x.p.vecWeight == 0 {
		return nil
	}
	// A remote embedder that hangs must not hold the answer: words alone
	// answer after queryEmbedTimeout.
	ectx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	vs, err := x.emb.Embed(ectx, []string{prompt})
	cancel()
	if err != nil || len(vs) != 1 {
		if err == nil {
			err = fmt.Errorf("%d vectors for one text", len(vs))
		}
		resp.Note = joinNote(resp.Note, fmt.Sprintf("lexical only: the embedder failed (%v)", err))
		return nil
	}
	if zeroVector(vs[0]) {
		return nil // no known word: no vector evidence
	}
	return vs[0]
}

// noteProgress says in resp's note when the index is not complete yet.
func (x *Index) noteProgress(resp *Response) {
	switch last := x.st.LastArrival(); {
	case !x.lexReady.Load():
		resp.Note = joinNote(resp.Note, fmt.Sprintf("the index is still loading (%d of %d messages read); some messages may be missing", max(x.lexCur.Load(), x.scanned.Load()), last))
	case x.p.vecWeight == 0:
	case !x.vecReady.Load():
		resp.Note = joinNote(resp.Note, "lexical only: the vector index is still loading")
	case x.embCur.Load() < last && last-x.embCur.Load() > 100:
		resp.Note = joinNote(resp.Note, fmt.Sprintf("embedding in progress (%d of %d messages): the newest are found by words only", x.embCur.Load(), last))
	}
}

// span is a passage in the making: positions lo…hi of one channel.
type span struct {
	ch     uint32
	lo, hi int // positions, inclusive
	hits   []uint32
	score  float64
}

// spans groups ranked candidates into passages: each hit with its
// neighbours, hits whose windows touch merged into one passage, until
// MaxResults passages. Candidates under the threshold are skipped. The
// caller holds c.mu.
func (x *Index) spans(q Query, ranked []scored) []*span {
	c := x.c
	var spans []*span
	maxSpan := 2*q.Window + 1 + maxMerge
	floor := max(q.ScoreThreshold, minScore)
	for _, s := range ranked {
		if len(spans) >= q.MaxResults {
			break
		}
		if s.score < floor {
			continue
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
			if s.lent && p < sp.lo {
				// A lent line follows the talk it answers: it does not
				// open a passage that ranked before it.
				hi = min(hi, sp.lo-1)
				continue
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
			spans = append(spans, &span{ch: ch, lo: lo, hi: hi, hits: []uint32{s.doc}, score: s.score})
		}
	}
	return spans
}

// windows turns ranked candidates into results (spans), reading each
// passage's messages from the store. The caller holds c.mu.
func (x *Index) windows(ctx context.Context, q Query, ranked []scored, resp *Response) (*Response, error) {
	c := x.c
	spans := x.spans(q, ranked)
	// Every passage's messages in one read.
	var refs []store.Ref
	for _, sp := range spans {
		for p := sp.lo; p <= sp.hi; p++ {
			refs = append(refs, c.ref(c.order[sp.ch][p]))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	msgs, err := x.st.GetRefs(refs)
	if err != nil {
		return nil, err
	}
	for _, sp := range spans {
		r := Result{Kind: KindMessages, Channel: c.chans[sp.ch], Score: sp.score, MessageIDs: []string{}, ExternalIDs: []string{}, Hits: []string{}}
		for _, h := range sp.hits {
			r.Hits = append(r.Hits, c.docs[h].id.String())
		}
		var lines []string
		for p := sp.lo; p <= sp.hi; p++ {
			m := msgs[0]
			msgs = msgs[1:]
			if m == nil || m.IsRecalled() {
				continue // gone, or withdrawn by its sender: never recalled
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
