package daemon

import (
	"context"
	"github.com/cyan-agent/cyan/metrics"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/tools"
)

// Embedder builds the recall embedder a configuration names: a model's
// calls go through the llm layer (its timeouts, retries and errors).
func Embedder(c config.Embed, log *slog.Logger) (recall.Embedder, error) {
	switch c.Provider {
	case "ollama", "openai":
		e, err := llm.NewEmbedder(llm.EmbedOptions{Provider: c.Provider, BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey, Logger: log})
		if err != nil {
			return nil, err
		}
		return recall.NewModelEmbedder(e, c.Provider, c.Model), nil
	default:
		return recall.HashEmbedder{}, nil
	}
}

// newRecall builds the recall index over the store and the event log's
// records, with tool mode's pass running the recall_filter and
// recall_summary prompt scripts.
func newRecall(cfg *config.Config, st *store.Store, scripts recall.Scripts, log *events.Log, now func() time.Time, logger *slog.Logger) (*recall.Index, error) {
	emb, err := Embedder(cfg.Embed, logger.With("component", "recall"))
	if err != nil {
		return nil, err
	}
	return recall.New(recall.Options{
		Store: st, Embedder: emb, IndexKind: cfg.Embed.Index, VectorWeight: cfg.Embed.VectorWeight,
		CacheDir: filepath.Join(cfg.DataDir, "recall"), Logger: logger.With("component", "recall"),
		Judge: recall.NewScriptJudge(scripts), Rewrite: true, Records: eventRecords{log: log, now: now},
	})
}

// eventRecords is the event log as recall's record source: every titled
// record (its title, under "event <label>", in its channel) and every
// theory (its article, under "theory <title>", found where its scope
// says: public ones everywhere, a conversation's there, the owner's by the
// owner in private).
type eventRecords struct {
	log *events.Log
	now func() time.Time
}

var _ recall.Records = eventRecords{}

func (e eventRecords) Records(context.Context) ([]recall.Record, error) {
	evs, err := e.log.Titled(e.now())
	if err != nil {
		return nil, err
	}
	ths, err := e.log.Theories()
	if err != nil {
		return nil, err
	}
	out := make([]recall.Record, 0, len(evs)+len(ths))
	for _, ev := range evs {
		out = append(out, recall.Record{Kind: recall.KindEvent, ID: ev.ID, Channel: ev.Source.Channel,
			Source: "event " + ev.Label, Text: ev.Title, Time: ev.Start})
	}
	for _, th := range ths {
		s := th.ScopeOf() // a conversation's theory is found there; the owner's only by the owner
		out = append(out, recall.Record{Kind: recall.KindTheory, ID: th.ID, Channel: s.Channel, OwnerOnly: s.Owner,
			Source: "theory " + th.Title, Text: th.Article, Time: th.Updated})
	}
	return out, nil
}

// registerRecallTool puts the recall tool into the registry. It reads the
// conversation it is called in, nothing else; its effects are on the
// agent's own memory: the passages go into the workspace's pulled-info
// area, and what it hits is reviewed.
func registerRecallTool(reg *tools.Registry, idx *recall.Index, mem *memory.Memory, rv recall.Reviews, m *metrics.Metrics) error {
	rt := idx.Tool(recall.ToolOptions{Pull: mem.PullRange, Reviewed: rv.Reviewed})
	return reg.Register(tools.Tool{
		Spec: tools.SpecFrom(rt.ToolSpec, tools.SourceBuiltin),
		Run: func(ctx context.Context, c *tools.Call) (packets.Result, error) {
			r := reg.Reader(c.Caller)
			began := time.Now()
			out, err := rt.Run(ctx, c.Caller.Channel, r.Owner && r.Private, string(c.Args))
			m.Recall("tool", "tool", time.Since(began))
			return packets.Result{OutputText: out}, err
		},
	})
}
