package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/cyan-agent/cyan/journal"
)

// Follower counts the turns and scheduled backups the journal tells of
// (journal.TurnDone, journal.BackupDone). Its cursor starts where the
// journal was when it was made and lives across runs, so a part restarted
// counts on from where it stopped.
type Follower struct {
	m   *Metrics
	sub *journal.Subscription
}

// Follow makes m's Follower of j (nil m: one that counts nothing).
func (m *Metrics) Follow(j *journal.Journal) *Follower {
	return &Follower{m: m, sub: j.Subscribe(j.Last(), journal.Filter{Kinds: []journal.Kind{journal.TurnDone, journal.BackupDone}})}
}

// Run counts until ctx ends (nil) or the journal closes (nil).
func (f *Follower) Run(ctx context.Context) error {
	for {
		evs, err := f.sub.Next(ctx)
		if ctx.Err() != nil || errors.Is(err, journal.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range evs {
			f.count(e)
		}
	}
}

func (f *Follower) count(e journal.Event) {
	switch e.Kind {
	case journal.TurnDone:
		var t journal.Turn
		if e.Decode(&t) != nil {
			return
		}
		outcome := t.Outcome
		if outcome == "" {
			outcome = journal.TurnAnswered
		}
		f.m.Turn(t.Kind, e.Proactive, outcome, time.Duration(t.Millis)*time.Millisecond)
	case journal.BackupDone:
		var b journal.Backup
		if e.Decode(&b) != nil {
			return
		}
		var err error
		if b.Error != "" {
			err = errors.New(b.Error)
		}
		f.m.Backup(err)
	}
}
