package recall

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/packets"
)

// ToolName is the recall tool's name (SPEC §5).
const ToolName = "recall"

var toolParams = json.RawMessage(`{
  "type": "object",
  "properties": {
    "prompt": {"type": "string", "description": "what to recall, in words: who, what, roughly when"},
    "max_results": {"type": "integer", "minimum": 1, "maximum": 64, "description": "most passages to return (64 if unsure)"},
    "score_threshold": {"type": "number", "minimum": 0, "maximum": 100, "description": "lowest score kept, 0–100 (0 if unsure)"}
  },
  "required": ["prompt"],
  "additionalProperties": false
}`)

// ToolOptions connect the recall tool to the rest of the agent's memory.
type ToolOptions struct {
	// Pull puts a recalled passage into the channel's pulled-info area
	// (the workspace owns it and its lifetime): ref is the passage's
	// source, location its place in it (nil: nothing is pulled).
	Pull func(channel, ref, location, summary string)
	// Reviewed is told, after each call, what the answer holds: a hit on
	// a workspace item or an event counts as a review of it (D = 0.7). The
	// daemon maps passages to the items made in their turns and the events
	// whose topics they belong to, and record results to their records.
	Reviewed func(ctx context.Context, channel string, results []Result)
	// Took, if set, is told how long each call took (the metrics).
	Took func(time.Duration)
}

// Tools returns, for the registry, the recall tool: the agent's own
// recall, a natural tool (its aim is the prompt) whose effects are on the
// agent's own memory (the pulled-info area, the reviews). A call searches
// the conversation it is made in (a group chat never recalls another
// chat's private talk; shared theories are found everywhere; the owner's
// knowledge only when the owner asks in private), runs tool mode, puts
// each passage into the pulled-info area, tells Reviewed what it hit and
// answers with summarized_info and the passages. Its error is the model's
// to read (bad arguments; nothing found is not an error). The owner's
// searches through the API (Index.Recall) do neither: they are not the
// agent remembering.
func (x *Index) Tools(o ToolOptions) []packets.Tool {
	return []packets.Tool{{ToolSpec: packets.ToolSpec{
		Name: ToolName, Kind: packets.ToolNatural, Effects: []string{packets.EffectMemory}, AimParam: "prompt",
		Description: "Recall what was said in this conversation, however long ago, and the events and theories " +
			"you keep: give a description (\"what nyalia said about her exams last year\"); returns scored passages " +
			"with their place and a summary. Use it when the answer is older than the messages you can see.",
		Parameters: toolParams},
		Run: func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
			if o.Took != nil {
				defer func(began time.Time) { o.Took(time.Since(began)) }(time.Now())
			}
			out, err := x.runTool(ctx, o, c.Caller.Channel, c.Reader().OwnerAlone(), string(c.Args))
			return packets.Result{OutputText: out}, err
		},
	}}
}

// runTool runs one call in a channel with the model's JSON arguments;
// owner is set when the owner alone reads the answer (the owner asking in
// private: packets.Reader.OwnerAlone), Query.Owner.
func (x *Index) runTool(ctx context.Context, o ToolOptions, channel string, owner bool, args string) (string, error) {
	var a struct {
		Prompt         string   `json:"prompt"`
		MaxResults     *int     `json:"max_results"`
		ScoreThreshold *float64 `json:"score_threshold"`
	}
	dec := json.NewDecoder(strings.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return "", fmt.Errorf("the arguments are not {\"prompt\", \"max_results\"?, \"score_threshold\"?}: %v", err)
	}
	q := Query{Prompt: a.Prompt, Channel: channel, Owner: owner, MaxResults: MaxMaxResults}
	if a.MaxResults != nil {
		if *a.MaxResults < 1 {
			return "", fmt.Errorf("max_results must be at least 1")
		}
		q.MaxResults = *a.MaxResults
	}
	if a.ScoreThreshold != nil {
		q.ScoreThreshold = *a.ScoreThreshold
	}
	r, err := x.Recall(ctx, q, ModeTool)
	if err != nil {
		return "", err
	}
	if o.Pull != nil {
		for _, res := range r.Results {
			o.Pull(channel, res.Source, res.Location, PulledSummary(res))
		}
	}
	if o.Reviewed != nil && len(r.Results) > 0 {
		o.Reviewed(ctx, channel, r.Results)
	}
	return RenderToolAnswer(r), nil
}

// PulledSummary is a result's line in the pulled-info area: its first
// line, at most 160 bytes.
func PulledSummary(r Result) string {
	first := r.Text
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	return truncate(first, 160)
}

// RenderToolAnswer writes a tool-mode answer the way the model reads it:
// the summary, then each passage with its source, location and score.
func RenderToolAnswer(r *Response) string {
	var b strings.Builder
	if r.SummarizedInfo != "" {
		fmt.Fprintf(&b, "summarized_info: %s\n", r.SummarizedInfo)
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", r.Note)
	}
	if len(r.Results) == 0 {
		b.WriteString("no passage found\n")
	}
	for i, res := range r.Results {
		fmt.Fprintf(&b, "\n[%d] source: %s  location: %s  score: %g\n%s\n", i+1, res.Source, res.Location, res.Score, res.Text)
	}
	return strings.TrimSpace(b.String())
}
