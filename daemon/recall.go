package daemon

import (
	"context"
	"errors"
	"github.com/cyan-agent/cyan/metrics"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/observer"
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

// importBuilds turns finished imports into the event log's records
// (issue: after an import, the daemon builds the events and rollups the
// history implies). It follows the journal's MessagesImported: each batch
// of an import tells the channels and times it covers, and on the final
// batch it runs events.Log.BuildHistory for each channel over its span —
// titling every topic takes the model a while, and the import's request
// does not wait for it. Batches of several imports at once add up; a
// channel's span is the union. An import run again (every message already
// stored) still counts: building is idempotent, and a build the daemon did
// not finish (it stopped meanwhile) is finished then.
type importBuilds struct {
	sub     *journal.Subscription
	seen    map[string]span // channels of batches not yet final
	log     *events.Log
	lg      *slog.Logger
	builtFn func(channel string, rep *events.BuildReport) // tests
}

type span struct{ from, to time.Time }

func (s span) join(t time.Time) span {
	if s.from.IsZero() || t.Before(s.from) {
		s.from = t
	}
	if t.After(s.to) {
		s.to = t
	}
	return s
}

// newImportBuilds follows j from its present end.
func newImportBuilds(j *journal.Journal, log *events.Log, lg *slog.Logger) *importBuilds {
	return &importBuilds{sub: j.Subscribe(j.Last(), journal.Filter{Kinds: []journal.Kind{journal.MessagesImported}}),
		seen: map[string]span{}, log: log, lg: lg}
}

// take notes the batches of evs and returns the channels whose import is
// complete, each over its span.
func (b *importBuilds) take(evs []journal.Event) map[string]span {
	ready := map[string]span{}
	for _, e := range evs {
		var im journal.Imported
		if e.Kind != journal.MessagesImported || e.Decode(&im) != nil {
			continue
		}
		for _, sp := range im.Spans {
			b.seen[sp.Channel] = b.seen[sp.Channel].join(sp.From).join(sp.To)
		}
		if !im.Final {
			continue
		}
		for ch, s := range b.seen {
			ready[ch] = ready[ch].join(s.from).join(s.to)
		}
		clear(b.seen)
		b.lg.Info("import finished; building its events", "channels", len(ready), "added_in_last_batch", im.Added)
	}
	return ready
}

// run is the actor: it builds the history of each finished import, one
// channel at a time, until ctx ends.
func (b *importBuilds) run(ctx context.Context) error {
	ctx = observer.WithAccount(ctx, eventsAccount)
	for {
		evs, err := b.sub.Next(ctx)
		if ctx.Err() != nil || errors.Is(err, journal.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		work := b.take(evs)
		for ch, s := range work {
			rep, err := b.log.BuildHistory(ctx, ch, s.from, s.to)
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				b.lg.Error("building the events of an import failed; import it again to retry", "channel", ch, "err", err)
				continue
			}
			b.lg.Info("events built from imported history", "channel", ch, "messages", rep.Messages, "topics", rep.Topics,
				"written", rep.Written, "kept", rep.Kept, "replaced", rep.Replaced)
			b.log.Kick() // what the build left pending (extraction, retries) runs now, not at the next tick
			if b.builtFn != nil {
				b.builtFn(ch, rep)
			}
		}
	}
}
