package events

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cyan-agent/cyan/journal"
)

// Imports turns finished imports into the log's records: after an import,
// the events and rollups its history implies are built. It follows the
// journal's MessagesImported: each batch of an import tells the channels
// and times it covers, and the last one (Final) has Run build each channel
// over its span with BuildHistory — titling every topic takes the model a
// while, and the import's request does not wait for it. Batches of several
// imports at once add up; a channel's span is the union. An import run
// again (every message already stored) still counts: building is
// idempotent, and a build the daemon did not finish (it stopped meanwhile)
// is finished then.
type Imports struct {
	log  *Log
	lg   *slog.Logger
	sub  *journal.Subscription
	seen map[string]span // channels of batches not yet final
	// built, if set, is told of each channel built (tests).
	built func(channel string, rep *BuildReport)
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

// NewImports makes the import builder of l, following the store's journal
// from its present end; lg logs what it builds (nil: the log's logger).
func (l *Log) NewImports(lg *slog.Logger) *Imports {
	if lg == nil {
		lg = l.log
	}
	j := l.st.Journal()
	return &Imports{log: l, lg: lg, seen: map[string]span{},
		sub: j.Subscribe(j.Last(), journal.Filter{Kinds: []journal.Kind{journal.MessagesImported}})}
}

// take notes the import batches of evs and returns the channels whose
// import is complete, each over its span.
func (b *Imports) take(evs []journal.Event) map[string]span {
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

// Run is the actor: it builds the history of each finished import, one
// channel at a time, until ctx ends or the journal closes.
func (b *Imports) Run(ctx context.Context) error {
	for {
		evs, err := b.sub.Next(ctx)
		if ctx.Err() != nil || errors.Is(err, journal.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		for ch, s := range b.take(evs) {
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
			if b.built != nil {
				b.built(ch, rep)
			}
		}
	}
}
