package recall

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/google/uuid"
)

// Judge is tool mode's LLM pass. channel is the conversation the recall
// serves (for the traces).
type Judge interface {
	// Filter says which candidates fit the prompt (one bool each) and
	// whether searching further is hopeless.
	Filter(ctx context.Context, channel, prompt string, cands []Result) (keep []bool, giveUp bool, err error)
	// Summarize writes summarized_info from the kept passages.
	Summarize(ctx context.Context, channel, prompt string, kept []Result) (string, error)
}

// Scripts runs prompt scripts: Call runs the script called name with the
// step's structured inputs and decodes its validated value into out;
// channel names the conversation in the traces. The daemon passes the
// script library (script.Library.Call).
type Scripts interface {
	Call(ctx context.Context, name, channel string, in map[string]any, out any) error
}

// The prompt scripts of tool mode (built in; a persona's scripts/ folder
// may override each). Their names are also the names of the JSON-schema
// response formats their calls ask for.
const (
	// ScriptFilter keeps the passages that fit the request and may give up.
	ScriptFilter = "recall_filter"
	// ScriptSummary writes summarized_info.
	ScriptSummary = "recall_summary"
	// ScriptRewrite turns the request into search queries (Options.Rewrite).
	ScriptRewrite = "recall_rewrite"
)

// Rewriter is a Judge that can also turn a request into search queries
// (sub-questions of a many-part question, the event of a "when" question)
// before tool mode searches. ScriptJudge is one.
type Rewriter interface {
	Rewrite(ctx context.Context, channel, prompt string) ([]string, error)
}

// maxRewrites bounds the queries a rewrite adds to the request.
const maxRewrites = 3

// Rewrite implements Rewriter: the recall_rewrite script's queries, cut to
// maxRewrites, without blanks, repeats or the request itself.
func (j *ScriptJudge) Rewrite(ctx context.Context, channel, prompt string) ([]string, error) {
	var ans struct {
		Queries []string `json:"queries"`
	}
	if err := j.Scripts.Call(ctx, ScriptRewrite, channel, map[string]any{"prompt": prompt}, &ans); err != nil {
		return nil, fmt.Errorf("recall: %s: %w", ScriptRewrite, err)
	}
	seen := map[string]bool{strings.ToLower(strings.TrimSpace(prompt)): true}
	var out []string
	for _, q := range ans.Queries {
		q = strings.TrimSpace(q)
		if k := strings.ToLower(q); q != "" && len(q) <= MaxPromptBytes && !seen[k] && len(out) < maxRewrites {
			seen[k] = true
			out = append(out, q)
		}
	}
	return out, nil
}

var _ Rewriter = (*ScriptJudge)(nil)

// ScriptJudge is the Judge that runs tool mode's pass as prompt scripts:
// each call is traced, and a persona overrides it with a file of the same
// name. Go numbers the passages and renders them as one text input (the
// numbers are what the filter answers with); an answer's numbers outside
// the list are ignored.
type ScriptJudge struct {
	Scripts Scripts
	// MaxPassageBytes bounds each passage shown to the model (0: 1200).
	MaxPassageBytes int
}

// NewScriptJudge makes a judge that runs scripts with s.
func NewScriptJudge(s Scripts) *ScriptJudge { return &ScriptJudge{Scripts: s} }

var _ Judge = (*ScriptJudge)(nil)

func (j *ScriptJudge) passages(cands []Result) string {
	limit := j.MaxPassageBytes
	if limit <= 0 {
		limit = 1200
	}
	var b strings.Builder
	for i, r := range cands {
		fmt.Fprintf(&b, "[%d] %s, %s (%s):\n%s\n\n", i+1, r.Source, r.Location, r.From.Format("2006-01-02 15:04"), truncate(r.Text, limit))
	}
	return strings.TrimSpace(b.String())
}

// Filter implements Judge.
func (j *ScriptJudge) Filter(ctx context.Context, channel, prompt string, cands []Result) ([]bool, bool, error) {
	var ans struct {
		Keep   []int `json:"keep"`
		GiveUp bool  `json:"give_up"`
	}
	in := map[string]any{"prompt": prompt, "passages": j.passages(cands), "count": len(cands)}
	if err := j.Scripts.Call(ctx, ScriptFilter, channel, in, &ans); err != nil {
		return nil, false, fmt.Errorf("recall: %s: %w", ScriptFilter, err)
	}
	keep := make([]bool, len(cands))
	for _, n := range ans.Keep {
		if n >= 1 && n <= len(cands) {
			keep[n-1] = true
		}
	}
	return keep, ans.GiveUp, nil
}

// Summarize implements Judge.
func (j *ScriptJudge) Summarize(ctx context.Context, channel, prompt string, kept []Result) (string, error) {
	var ans struct {
		Summary string `json:"summarized_info"`
	}
	in := map[string]any{"prompt": prompt, "passages": j.passages(kept)}
	if err := j.Scripts.Call(ctx, ScriptSummary, channel, in, &ans); err != nil {
		return "", fmt.Errorf("recall: %s: %w", ScriptSummary, err)
	}
	return strings.TrimSpace(ans.Summary), nil
}

// Tool mode bounds.
const (
	maxRounds = 4
	maxBatch  = 32
)

// searchAll searches for the request and for each of its rewrites, and
// takes their passages in turns (the request's first, then each
// rewrite's first, then the seconds …), each passage once, up to
// q.MaxResults: the pieces of a many-part question all get a place.
func (x *Index) searchAll(ctx context.Context, q Query, rewrites []string) (*Response, error) {
	r, err := x.search(ctx, q)
	if err != nil || len(rewrites) == 0 {
		return r, err
	}
	lists := [][]Result{r.Results}
	for _, p := range rewrites {
		sub := q
		sub.Prompt = p
		rr, err := x.search(ctx, sub)
		if err != nil {
			return nil, err
		}
		lists = append(lists, rr.Results)
	}
	seen := map[string]bool{}
	var merged []Result
	for i := 0; len(merged) < q.MaxResults; i++ {
		more := false
		for _, l := range lists {
			if i >= len(l) || len(merged) >= q.MaxResults {
				continue
			}
			more = true
			k := l[i].key
			if k == "" {
				k = strings.Join(l[i].MessageIDs, ",")
			}
			if !seen[k] {
				seen[k] = true
				merged = append(merged, l[i])
			}
		}
		if !more {
			break
		}
	}
	r.Results = merged
	return r, nil
}

// Recall answers a query in its mode: ModeSearch is Search; ModeTool (the
// default) runs the seed's natural tool. It takes a first batch of
// max_results passages (with Options.Rewrite, for the request and the
// queries the judge rewrote it into, taken in turns; the rewrite is one
// more model call, traced like the others), lets the judge drop those that do not fit, sizes
// the next batch from the rejection rate (remaining / acceptance rate,
// capped at 32), stops when it has enough, when the judge gives up, when
// nothing new is found or after 4 rounds, and then has the judge write
// summarized_info. If the judge fails, the search results are returned
// unfiltered and the note says why.
func (x *Index) Recall(ctx context.Context, q Query, mode string) (*Response, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	switch mode {
	case ModeSearch:
		return sorted(x.search(ctx, q))
	case ModeTool, "":
	default:
		return nil, fmt.Errorf("%w: mode %q is not %q or %q", ErrBadQuery, mode, ModeSearch, ModeTool)
	}
	if x.o.Judge == nil {
		r, err := x.search(ctx, q)
		if err == nil {
			r.Note = joinNote(r.Note, "tool mode has no model to filter with; these are plain search results")
		}
		return sorted(r, err)
	}
	want := q.MaxResults
	batch := want
	if q.Window == 0 {
		q.Window = ToolWindow
	}
	q.exclude, q.excludeRecs = map[uuid.UUID]bool{}, map[string]bool{}
	out := &Response{Results: []Result{}}
	var rewriteNote string
	if rw, ok := x.o.Judge.(Rewriter); ok && x.o.Rewrite {
		qs, err := rw.Rewrite(ctx, q.Channel, q.Prompt)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			rewriteNote = "the request was searched as it is (" + err.Error() + ")"
		default:
			out.Queries = qs
		}
	}
	for out.Rounds < maxRounds && len(out.Results) < want {
		out.Rounds++
		sub := q
		sub.MaxResults = batch
		r, err := x.searchAll(ctx, sub, out.Queries)
		if err != nil {
			return nil, err
		}
		out.Lexical, out.Vector = r.Lexical, r.Vector
		if out.Rounds == 1 {
			out.Note = joinNote(r.Note, rewriteNote)
		}
		if len(r.Results) == 0 {
			break
		}
		for _, res := range r.Results {
			if res.key != "" {
				q.excludeRecs[res.key] = true
			}
			for _, id := range res.MessageIDs {
				if u, err := uuid.Parse(id); err == nil {
					q.exclude[u] = true
				}
			}
		}
		keep, giveUp, err := x.o.Judge.Filter(ctx, q.Channel, q.Prompt, r.Results)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out.Note = joinNote(out.Note, "the model could not filter the results ("+err.Error()+"); these are unfiltered")
			out.Results = append(out.Results, r.Results[:min(len(r.Results), want-len(out.Results))]...)
			return sorted(out, nil)
		}
		accepted := 0
		for i, ok := range keep {
			if ok && len(out.Results) < want {
				out.Results = append(out.Results, r.Results[i])
				accepted++
			}
		}
		if giveUp {
			out.Note = joinNote(out.Note, "the model gave up looking further")
			break
		}
		if accepted == 0 && out.Rounds >= 2 {
			break
		}
		rate := float64(accepted) / float64(len(r.Results))
		remaining := want - len(out.Results)
		batch = min(maxBatch, int(math.Ceil(float64(remaining)/math.Max(rate, 0.1))))
	}
	if len(out.Results) > 0 {
		s, err := x.o.Judge.Summarize(ctx, q.Channel, q.Prompt, out.Results)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out.Note = joinNote(out.Note, "no summary: "+err.Error())
		}
		out.SummarizedInfo = s
	} else {
		out.Note = joinNote(out.Note, "nothing that fits was found")
	}
	return sorted(out, nil)
}
