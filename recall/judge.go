package recall

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/cyan-agent/cyan/llm"
	"github.com/google/uuid"
)

// Judge is tool mode's LLM pass.
type Judge interface {
	// Filter says which candidates fit the prompt (one bool each) and
	// whether searching further is hopeless.
	Filter(ctx context.Context, prompt string, cands []Result) (keep []bool, giveUp bool, err error)
	// Summarize writes summarized_info from the kept passages.
	Summarize(ctx context.Context, prompt string, kept []Result) (string, error)
}

// The prompts of LLMJudge. They are the recall tool's prompt script: the
// text a user would tune; they move into the prompt-script files of the
// tool registry when it lands.
var (
	//go:embed prompts/filter.md
	filterPrompt string
	//go:embed prompts/summarize.md
	summarizePrompt string
)

// LLMJudge is a Judge over a plain chat call with a JSON-schema answer.
type LLMJudge struct {
	Client llm.Client
	// MaxPassageBytes bounds each passage shown to the model (0: 1200).
	MaxPassageBytes int
}

var (
	filterSchema    = json.RawMessage(`{"type":"object","properties":{"keep":{"type":"array","items":{"type":"integer"}},"give_up":{"type":"boolean"}},"required":["keep","give_up"],"additionalProperties":false}`)
	summarizeSchema = json.RawMessage(`{"type":"object","properties":{"summarized_info":{"type":"string"}},"required":["summarized_info"],"additionalProperties":false}`)
)

func (j *LLMJudge) passages(cands []Result) string {
	limit := j.MaxPassageBytes
	if limit <= 0 {
		limit = 1200
	}
	var b strings.Builder
	for i, r := range cands {
		fmt.Fprintf(&b, "[%d] %s, %s (%s):\n%s\n\n", i+1, r.Source, r.Location, r.From.Format("2006-01-02 15:04"), truncate(r.Text, limit))
	}
	return b.String()
}

func fill(tmpl, prompt, passages string) string {
	return strings.NewReplacer("{{prompt}}", prompt, "{{passages}}", passages).Replace(tmpl)
}

func (j *LLMJudge) ask(ctx context.Context, name string, schema json.RawMessage, content string, out any) error {
	temp := 0.0
	resp, err := j.Client.Chat(ctx, llm.Request{
		Messages:       []llm.Message{{Role: llm.RoleUser, Content: content}},
		Temperature:    &temp,
		ResponseFormat: &llm.ResponseFormat{Name: name, Schema: schema, Strict: true},
		Think:          llm.ThinkOff,
	})
	if err != nil {
		return err
	}
	text := strings.TrimSpace(resp.Content)
	if i, k := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && k > i {
		text = text[i : k+1] // tolerate code fences and chatter
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		return fmt.Errorf("recall: the model's %s answer is not the JSON asked for: %w", name, err)
	}
	return nil
}

// Filter implements Judge.
func (j *LLMJudge) Filter(ctx context.Context, prompt string, cands []Result) ([]bool, bool, error) {
	var ans struct {
		Keep   []int `json:"keep"`
		GiveUp bool  `json:"give_up"`
	}
	if err := j.ask(ctx, "recall_filter", filterSchema, fill(filterPrompt, prompt, j.passages(cands)), &ans); err != nil {
		return nil, false, err
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
func (j *LLMJudge) Summarize(ctx context.Context, prompt string, kept []Result) (string, error) {
	var ans struct {
		Summary string `json:"summarized_info"`
	}
	if err := j.ask(ctx, "recall_summary", summarizeSchema, fill(summarizePrompt, prompt, j.passages(kept)), &ans); err != nil {
		return "", err
	}
	return strings.TrimSpace(ans.Summary), nil
}

// Tool mode bounds.
const (
	maxRounds = 4
	maxBatch  = 32
)

// Recall answers a query in its mode: ModeSearch is Search; ModeTool (the
// default) runs the seed's natural tool. It takes a first batch of
// max_results passages, lets the judge drop those that do not fit, sizes
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
		return x.search(ctx, q)
	case ModeTool, "":
	default:
		return nil, fmt.Errorf("%w: mode %q is not %q or %q", ErrBadQuery, mode, ModeSearch, ModeTool)
	}
	if x.o.Judge == nil {
		r, err := x.search(ctx, q)
		if err == nil {
			r.Note = joinNote(r.Note, "tool mode has no model to filter with; these are plain search results")
		}
		return r, err
	}
	want := q.MaxResults
	batch := want
	if q.Window == 0 {
		q.Window = ToolWindow
	}
	q.exclude = map[uuid.UUID]bool{}
	out := &Response{Results: []Result{}}
	for out.Rounds < maxRounds && len(out.Results) < want {
		out.Rounds++
		sub := q
		sub.MaxResults = batch
		r, err := x.search(ctx, sub)
		if err != nil {
			return nil, err
		}
		out.Lexical, out.Vector = r.Lexical, r.Vector
		if out.Rounds == 1 {
			out.Note = r.Note
		}
		if len(r.Results) == 0 {
			break
		}
		for _, res := range r.Results {
			for _, id := range res.MessageIDs {
				if u, err := uuid.Parse(id); err == nil {
					q.exclude[u] = true
				}
			}
		}
		keep, giveUp, err := x.o.Judge.Filter(ctx, q.Prompt, r.Results)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out.Note = joinNote(out.Note, "the model could not filter the results ("+err.Error()+"); these are unfiltered")
			out.Results = append(out.Results, r.Results[:min(len(r.Results), want-len(out.Results))]...)
			x.reviewed(q.Channel, out.Results)
			return out, nil
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
		s, err := x.o.Judge.Summarize(ctx, q.Prompt, out.Results)
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
	x.reviewed(q.Channel, out.Results)
	return out, nil
}

func (x *Index) reviewed(channel string, rs []Result) {
	if x.o.Reviewed == nil || len(rs) == 0 {
		return
	}
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.MessageIDs...)
	}
	x.o.Reviewed(channel, ids)
}
