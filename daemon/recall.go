package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/observer"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
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

// importBuilds turns finished imports into the event log's records
// (issue: after an import, the daemon builds the events and rollups the
// history implies). The import hook runs inside the HTTP request of each
// batch; it only notes the channels and times the import covers, and on
// the final batch hands them to the actor, which runs
// events.Log.BuildHistory for each channel over its span — titling every
// topic takes the model a while, and the request should not wait for it.
// Batches of several imports at once add up; a channel's span is the
// union. An import run again (every message already stored) still counts:
// building is idempotent, and a build the daemon did not finish (it
// stopped meanwhile) is finished then.
type importBuilds struct {
	mu      sync.Mutex
	seen    map[string]span // channels of batches not yet final
	ready   map[string]span // channels whose import is complete
	kick    chan struct{}
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

func newImportBuilds(log *events.Log, lg *slog.Logger) *importBuilds {
	return &importBuilds{seen: map[string]span{}, ready: map[string]span{}, kick: make(chan struct{}, 1), log: log, lg: lg}
}

// imported is the API's import hook.
func (b *importBuilds) imported(batch api.ImportBatch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range batch.Messages {
		b.seen[m.Channel] = b.seen[m.Channel].join(m.Time)
	}
	if !batch.Final {
		return
	}
	for ch, s := range b.seen {
		r := b.ready[ch]
		r = r.join(s.from)
		b.ready[ch] = r.join(s.to)
	}
	clear(b.seen)
	b.lg.Info("import finished; building its events", "channels", len(b.ready), "added_in_last_batch", len(batch.Added))
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// run is the actor: it builds the history of each finished import, one
// channel at a time, until ctx ends.
func (b *importBuilds) run(ctx context.Context) error {
	ctx = observer.WithAccount(ctx, eventsAccount)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-b.kick:
		}
		b.mu.Lock()
		work := b.ready
		b.ready = map[string]span{}
		b.mu.Unlock()
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
