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
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/observer"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/tools"
)

// Embedder builds the recall embedder a configuration names.
func Embedder(c config.Embed) recall.Embedder {
	switch c.Provider {
	case "ollama", "openai":
		return &recall.RemoteEmbedder{Provider: c.Provider, BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey}
	default:
		return recall.HashEmbedder{}
	}
}

// newRecall builds the recall index over the store and the event log's
// records, with tool mode's pass running the recall_filter and
// recall_summary prompt scripts.
func newRecall(cfg *config.Config, st *store.Store, scripts recall.Scripts, log *events.Log, now func() time.Time, logger *slog.Logger) (*recall.Index, error) {
	return recall.New(recall.Options{
		Store: st, Embedder: Embedder(cfg.Embed), IndexKind: cfg.Embed.Index, VectorWeight: cfg.Embed.VectorWeight,
		CacheDir: filepath.Join(cfg.DataDir, "recall"), Logger: logger.With("component", "recall"),
		Judge: recall.NewScriptJudge(scripts), Records: eventRecords{log: log, now: now},
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

func (e eventRecords) Watch(ctx context.Context, changed func()) error {
	return e.log.Watch(ctx, changed)
}

// recallReviews is how a recall hit reviews what it hits (D = 0.7, the
// "may be used" review of SPEC §3):
//
//   - a passage of the chat log reviews the workspace items made in the
//     turns of its messages (memory.ReviewFrom: only items the channel may
//     see) and the topics (event-level records) its first and last
//     messages belong to, since a topic's body is its chat log;
//   - an event record that was hit is reviewed itself;
//   - a theory has no memory state: a hit on it reviews nothing.
//
// Each record or item is reviewed once per call however many passages hit
// it. A failure is logged; the recall's answer stands.
type recallReviews struct {
	mem *memory.Memory
	log *events.Log
	now func() time.Time
	lg  *slog.Logger
}

func (r recallReviews) reviewed(_ context.Context, channel string, rs []recall.Result) {
	var msgs, eventIDs []string
	var times []time.Time
	for _, res := range rs {
		switch res.Kind {
		case recall.KindMessages:
			msgs = append(msgs, res.MessageIDs...)
			times = append(times, res.From, res.To)
		case recall.KindEvent:
			eventIDs = append(eventIDs, res.ID)
		}
	}
	items, err := r.mem.ReviewFrom(channel, msgs, memory.DMaybe)
	if err != nil {
		r.lg.Warn("recall: reviewing workspace items failed", "channel", channel, "err", err)
	}
	topics, err := r.log.TopicsAt(channel, times)
	if err != nil {
		r.lg.Warn("recall: finding the recalled topics failed", "channel", channel, "err", err)
	}
	evs, err := r.log.Review(append(eventIDs, topics...), memory.DMaybe, r.now())
	if err != nil {
		r.lg.Warn("recall: reviewing events failed", "channel", channel, "err", err)
	}
	r.lg.Debug("recall reviewed what it hit", "channel", channel, "items", items, "events", evs)
}

// registerRecallTool puts the recall tool into the registry. It reads the
// conversation it is called in, nothing else; its effects are on the
// agent's own memory: the passages go into the workspace's pulled-info
// area, and what it hits is reviewed.
func registerRecallTool(reg *tools.Registry, idx *recall.Index, mem *memory.Memory, rv recallReviews) error {
	rt := idx.Tool(recall.ToolOptions{Pull: mem.PullRange, Reviewed: rv.reviewed})
	return reg.Register(tools.Tool{
		Spec: tools.Spec{Name: rt.Name, Description: rt.Description, Parameters: rt.Parameters, Kind: tools.Natural,
			Effects: []string{tools.EffectMemory}, Source: tools.SourceBuiltin, AimParam: "prompt"},
		Run: func(ctx context.Context, c *tools.Call) (packets.Result, error) {
			r := reg.Reader(c.Caller)
			out, err := rt.Run(ctx, c.Caller.Channel, r.Owner && r.Private, string(c.Args))
			return packets.Result{OutputText: out}, err
		},
	})
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
			if b.builtFn != nil {
				b.builtFn(ch, rep)
			}
		}
	}
}
