package events

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Imports turns finished imports into the log's records: after an import,
// the events and rollups its history implies are built. The import's
// batches only note the channels and times they cover (Note, in the
// request of each batch); the last one (Finish) hands them to the actor
// (Run), which runs BuildHistory for each channel over its span — titling
// every topic takes the model a while, and the request should not wait
// for it. Batches of several imports at once add up; a channel's span is
// the union. An import run again (every message already stored) still
// counts: building is idempotent, and a build the daemon did not finish
// (it stopped meanwhile) is finished then.
type Imports struct {
	log *Log
	lg  *slog.Logger

	mu    sync.Mutex
	seen  map[string]span // channels of batches not yet final
	ready map[string]span // channels whose import is complete
	kick  chan struct{}
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

// NewImports makes the import builder of l; lg logs what it builds (nil:
// the log's logger).
func (l *Log) NewImports(lg *slog.Logger) *Imports {
	if lg == nil {
		lg = l.log
	}
	return &Imports{log: l, lg: lg, seen: map[string]span{}, ready: map[string]span{}, kick: make(chan struct{}, 1)}
}

// Note records that an import's batch held a message of channel at t.
func (b *Imports) Note(channel string, t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen[channel] = b.seen[channel].join(t)
}

// Finish marks the import's last batch in: what its batches noted is
// built next. added is how many messages the last batch stored (logged).
func (b *Imports) Finish(added int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch, s := range b.seen {
		r := b.ready[ch]
		r = r.join(s.from)
		b.ready[ch] = r.join(s.to)
	}
	clear(b.seen)
	b.lg.Info("import finished; building its events", "channels", len(b.ready), "added_in_last_batch", added)
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// Run is the actor: it builds the history of each finished import, one
// channel at a time, until ctx ends.
func (b *Imports) Run(ctx context.Context) error {
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
			if b.built != nil {
				b.built(ch, rep)
			}
		}
	}
}
