package events

import (
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Review counts a recall of records as a review of each (SPEC §3, with Δt
// in days as MemoryState says): S ← S·(1 + a·e^(−d)·(1 − R)), R as of now,
// then D ← d and last_T ← now. A recall hit is d = 0.7 (may be used). A
// record recalled again soon after has R near 1 and barely grows, so a
// repeated recall cannot inflate it. Ids that name no record (replaced
// meanwhile) are skipped; it returns the ids reviewed.
func (l *Log) Review(ids []string, d float64, now time.Time) ([]string, error) {
	var done []string
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		_, err := l.updateEvent(id, func(_ *badger.Txn, e *Event) error {
			e.MemoryState.review(now, d)
			return nil
		})
		switch {
		case err == nil:
			done = append(done, id)
		case errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalid):
		default:
			return done, fmt.Errorf("events: review %s: %w", id, err)
		}
	}
	return done, nil
}

// TopicsAt returns the ids of channel's event-level records (topics) whose
// span holds one of the times: the events a recalled passage of that
// channel's chat log belongs to, since a topic's body is its chat log.
func (l *Log) TopicsAt(channel string, times []time.Time) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	err := l.db.View(func(txn *badger.Txn) error {
		for _, t := range times {
			// Topics do not overlap in time, but one may continue another:
			// look at the few that start last before t.
			list, err := eventsBefore(txn, channel, LevelEvent, t.Add(time.Nanosecond), 4, func(e *Event) bool { return !e.End.Before(t) })
			if err != nil {
				return err
			}
			for _, e := range list {
				if !seen[e.ID] {
					seen[e.ID] = true
					out = append(out, e.ID)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events: topics of %s: %w", channel, err)
	}
	return out, nil
}

// Titled lists every record that has its title, of every channel and
// level, oldest first, with its label: what recall indexes of the log.
func (l *Log) Titled(now time.Time) ([]*Event, error) {
	all, err := l.Events(Filter{Limit: 1 << 30}, now)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, e := range all {
		if e.Title != "" {
			out = append(out, e)
		}
	}
	return out, nil
}
