package events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
)

// Rollups. For each channel and level (day, week, month, year) a durable
// mark says until when every period is complete. A pass walks the periods
// from the mark up to now, in order: a period with children is summarised
// and written, one without is passed over, and the mark moves past it only
// once it is done. So a daemon that was down catches up every period it
// missed (cron alone would not), and a period whose summary fails stays due:
// the failure is kept with its retry time and the level waits behind it;
// nothing after it is skipped silently.
//
// A record written into a period already completed (a late topic, an
// import of history) marks that period dirty, and the next pass summarises
// it again; records of the same period have the same id, so the new
// summary replaces the old.

// mark is how far a level of a channel is complete.
type mark struct {
	DoneUntil time.Time `json:"done_until"`
}

// failure is a period whose summary failed.
type failure struct {
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error"`
	NextTry   time.Time `json:"next_try"`
}

// PendingRollup is a level of a channel with periods still due.
type PendingRollup struct {
	Channel string    `json:"channel"`
	Level   Level     `json:"level"`
	Label   string    `json:"label"` // the first period due
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Due     int       `json:"due"` // periods due at this level
	// Waiting says why the first period has not run, when it cannot yet.
	Waiting   string    `json:"waiting,omitempty"`
	Attempts  int       `json:"attempts,omitempty"`
	LastError string    `json:"last_error,omitempty"`
	NextTry   time.Time `json:"next_try,omitzero"`
}

// markedChannels lists the channels that have rollup marks.
func markedChannels(txn *badger.Txn) []string {
	var out []string
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixRollupMark)})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		k := it.Item().Key()[len(store.PrefixRollupMark):]
		if i := bytes.IndexByte(k, 0); i >= 0 && levelOfCode(k[len(k)-1]) == LevelDay {
			out = append(out, string(k[:i]))
		}
	}
	return out
}

// dirtyPeriods lists a level's dirty periods of a channel, oldest first.
func (l *Log) dirtyPeriods(txn *badger.Txn, channel string, level Level) []period {
	prefix := append(channelPrefix(store.PrefixRollupDirty, channel), level.code())
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	var out []period
	for it.Rewind(); it.Valid(); it.Next() {
		k := it.Item().Key()
		if len(k) == len(prefix)+8 {
			out = append(out, l.cal.periodOf(level, timeOfBytes(k[len(prefix):])))
		}
	}
	return out
}

// nextPeriod is the period of a level a pass should look at next: the
// oldest dirty one that has ended, else the one at the mark if it has ended.
func (l *Log) nextPeriod(txn *badger.Txn, channel string, level Level, now time.Time) (p period, sequential, ok bool, err error) {
	for _, d := range l.dirtyPeriods(txn, channel, level) {
		if !d.end.After(now) {
			return d, false, true, nil
		}
	}
	var m mark
	found, err := getJSON(txn, markKey(channel, level), &m)
	if err != nil || !found {
		return period{}, false, false, err
	}
	p = l.cal.periodOf(level, m.DoneUntil)
	if p.end.After(now) {
		return period{}, false, false, nil
	}
	return p, true, true, nil
}

// waiting says why a period cannot be summarised yet ("" when it can).
func (l *Log) waiting(txn *badger.Txn, channel string, p period) (string, error) {
	switch p.level {
	case LevelDay:
		since, err := l.openTopicSince(txn, channel)
		if err != nil {
			return "", err
		}
		if !since.IsZero() && since.Before(p.end) {
			return "a topic that began in it is still open", nil
		}
		evs, err := eventsIn(txn, channel, LevelEvent, p.start, p.end)
		if err != nil {
			return "", err
		}
		for _, e := range evs {
			if !e.titled() {
				return "a topic in it is not titled yet", nil
			}
		}
		return "", nil
	default:
		child := childLevel(p.level)
		var m mark
		if _, err := getJSON(txn, markKey(channel, child), &m); err != nil {
			return "", err
		}
		if m.DoneUntil.Before(p.end) {
			return fmt.Sprintf("its %ss are not all summarised yet", child), nil
		}
		for _, d := range l.dirtyPeriods(txn, channel, child) {
			if d.start.Before(p.end) && d.end.After(p.start) {
				return fmt.Sprintf("a %s in it is being summarised again", child), nil
			}
		}
		return "", nil
	}
}

// rollups runs every due summary of every channel, levels in order.
func (l *Log) rollups(ctx context.Context, now time.Time, ignoreBackoff bool, rep *Report) error {
	var chans []string
	if err := l.db.View(func(txn *badger.Txn) error { chans = markedChannels(txn); return nil }); err != nil {
		return err
	}
	for _, ch := range chans {
		for _, lv := range rollupLevels {
			if err := l.rollLevel(ctx, ch, lv, now, ignoreBackoff, rep); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return nil
			}
		}
	}
	return nil
}

// rollLevel summarises a level's due periods of one channel, oldest first,
// until none is due, one must wait, or one fails.
func (l *Log) rollLevel(ctx context.Context, channel string, level Level, now time.Time, ignoreBackoff bool, rep *Report) error {
	for ctx.Err() == nil {
		var (
			p        period
			seq, ok  bool
			wait     string
			fail     failure
			failed   bool
			children []*Event
			until    time.Time // where the mark moves when p is done
		)
		err := l.db.View(func(txn *badger.Txn) error {
			var err error
			if p, seq, ok, err = l.nextPeriod(txn, channel, level, now); err != nil || !ok {
				return err
			}
			if wait, err = l.waiting(txn, channel, p); err != nil || wait != "" {
				return err
			}
			if failed, err = getJSON(txn, periodKey(store.PrefixRollupFail, channel, level, p.start), &fail); err != nil {
				return err
			}
			children, err = eventsIn(txn, channel, childLevel(level), p.start, p.end)
			if err != nil || len(children) > 0 || !seq {
				return err
			}
			until, err = l.quietUntil(txn, channel, p, now)
			return err
		})
		if err != nil {
			return fmt.Errorf("events: rollup %s of %s: %w", level, channel, err)
		}
		if !ok || wait != "" || (failed && !ignoreBackoff && fail.NextTry.After(now)) {
			return nil
		}
		var rec *Event
		if len(children) > 0 {
			in := RollupInput{Channel: channel, Agent: l.agent(), Level: level, Label: l.cal.label(level, p.start)}
			for _, c := range children {
				in.Children = append(in.Children, RollupChild{Label: l.cal.label(c.Level, c.Start), Title: c.Title, Importance: c.Importance})
			}
			sum, err := l.w.Summarize(ctx, in)
			if ctx.Err() != nil {
				return nil
			}
			if err == nil && cleanText(sum.Title, maxTitleRunes) == "" {
				err = fmt.Errorf("the writer gave an empty summary")
			}
			if err != nil {
				rep.Failed = append(rep.Failed, fmt.Sprintf("%s %s (%s): %v", level, in.Label, channel, err))
				return l.failPeriod(channel, p, fail, err, now)
			}
			rec = l.rollupRecord(channel, p, children, sum, now)
		}
		if until.Before(p.end) {
			until = p.end
		}
		if err := l.completePeriod(channel, p, seq, until, rec); err != nil {
			return err
		}
		if rec != nil {
			rep.Rollups = append(rep.Rollups, fmt.Sprintf("%s %s (%s)", level, l.cal.label(level, p.start), channel))
		}
	}
	return nil
}

func (l *Log) rollupRecord(channel string, p period, children []*Event, sum Summary, now time.Time) *Event {
	imp := clamp01(sum.Importance)
	e := &Event{
		ID: recordID(channel, p.level, p.start), Level: p.level, Title: cleanText(sum.Title, maxTitleRunes), Importance: imp,
		Start: p.start, End: p.end, Children: make([]string, 0, len(children)), Written: now,
		Source: Source{Channel: channel, FirstMessageID: children[0].Source.FirstMessageID, LastMessageID: children[len(children)-1].Source.LastMessageID},
	}
	for _, c := range children {
		e.Children = append(e.Children, c.ID)
		e.Messages += c.Messages
		if c.Source.FirstMessageID != "" {
			e.Runs = append(e.Runs, Run{Label: l.cal.label(c.Level, c.Start), First: c.Source.FirstMessageID, Last: c.Source.LastMessageID})
		}
	}
	e.MemoryState = newMemory(p.level, imp, p.end)
	return e
}

// quietUntil is how far a level's mark may move past p, a sequential
// period with no children: to the start of the period holding the next
// child record, or of the one that cannot be summarised yet (an open
// topic's day, a child level's mark, a child period being summarised
// again), else of now's period. The periods in between have nothing to
// summarise, so one write passes them all: a history imported from
// years back would otherwise cost a synced write for every empty day,
// week and month since.
func (l *Log) quietUntil(txn *badger.Txn, channel string, p period, now time.Time) (time.Time, error) {
	until := now
	child := childLevel(p.level)
	next, err := firstEventFrom(txn, channel, child, p.end)
	if err != nil {
		return time.Time{}, err
	}
	if !next.IsZero() && next.Before(until) {
		until = next
	}
	if p.level == LevelDay {
		since, err := l.openTopicSince(txn, channel)
		if err != nil {
			return time.Time{}, err
		}
		if !since.IsZero() && since.Before(until) {
			until = since
		}
	} else {
		var m mark
		if _, err := getJSON(txn, markKey(channel, child), &m); err != nil {
			return time.Time{}, err
		}
		if m.DoneUntil.Before(until) {
			until = m.DoneUntil
		}
		for _, d := range l.dirtyPeriods(txn, channel, child) {
			if !d.end.Before(p.end) && d.start.Before(until) {
				until = d.start
			}
		}
	}
	return l.cal.periodOf(p.level, until).start, nil
}

// completePeriod writes a period's record (or removes a stale one when it
// has no children left), clears its dirt and failure, and, for a
// sequential period, moves the mark to until (p's end, or past the empty
// periods after it).
func (l *Log) completePeriod(channel string, p period, sequential bool, until time.Time, rec *Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.db.Update(func(txn *badger.Txn) error {
		if rec != nil {
			if err := putEvent(txn, rec); err != nil {
				return err
			}
			if err := l.noteRecord(txn, channel, p.level, p.start); err != nil {
				return err
			}
		} else if old, err := getEvent(txn, recordID(channel, p.level, p.start)); err == nil {
			if err := deleteEvent(txn, old); err != nil {
				return err
			}
		}
		for _, k := range [][]byte{periodKey(store.PrefixRollupDirty, channel, p.level, p.start), periodKey(store.PrefixRollupFail, channel, p.level, p.start)} {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		if !sequential {
			return nil
		}
		return setJSON(txn, markKey(channel, p.level), &mark{DoneUntil: until})
	})
	if err != nil {
		return fmt.Errorf("events: write %s %s of %s: %w", p.level, l.cal.label(p.level, p.start), channel, err)
	}
	return nil
}

func (l *Log) failPeriod(channel string, p period, f failure, cause error, now time.Time) error {
	f.Attempts++
	f.LastError = cleanText(cause.Error(), 500)
	f.NextTry = now.Add(retry.Delay(f.Attempts - 1))
	l.log.Warn("rollup failed; it stays due and will be retried", "channel", channel, "level", p.level,
		"period", l.cal.label(p.level, p.start), "attempt", f.Attempts, "next_try", f.NextTry, "err", cause)
	return l.db.Update(func(txn *badger.Txn) error {
		return setJSON(txn, periodKey(store.PrefixRollupFail, channel, p.level, p.start), &f)
	})
}

// PendingRollups lists, per channel and level, the periods due as of now
// that are not written yet, with why the first one waits or how it failed.
func (l *Log) PendingRollups(now time.Time) ([]PendingRollup, error) {
	out := []PendingRollup{}
	err := l.db.View(func(txn *badger.Txn) error {
		for _, ch := range markedChannels(txn) {
			for _, lv := range rollupLevels {
				p, _, ok, err := l.nextPeriod(txn, ch, lv, now)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				pr := PendingRollup{Channel: ch, Level: lv, Label: l.cal.label(lv, p.start), Start: p.start, End: p.end}
				for _, d := range l.dirtyPeriods(txn, ch, lv) {
					if !d.end.After(now) {
						pr.Due++
					}
				}
				var m mark
				if _, err := getJSON(txn, markKey(ch, lv), &m); err != nil {
					return err
				}
				for q := l.cal.periodOf(lv, m.DoneUntil); !q.end.After(now) && pr.Due < 100000; q = l.cal.next(q) {
					pr.Due++
				}
				if pr.Waiting, err = l.waiting(txn, ch, p); err != nil {
					return err
				}
				var f failure
				if found, err := getJSON(txn, periodKey(store.PrefixRollupFail, ch, lv, p.start), &f); err != nil {
					return err
				} else if found {
					pr.Attempts, pr.LastError, pr.NextTry = f.Attempts, f.LastError, f.NextTry
				}
				out = append(out, pr)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events: pending rollups: %w", err)
	}
	return out, nil
}

// nextRetry is the earliest retry time of a failed step, if any.
func (l *Log) nextRetry() (time.Time, bool) {
	var at time.Time
	take := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	_ = l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixRollupFail), PrefetchValues: true})
		for it.Rewind(); it.Valid(); it.Next() {
			var f failure
			if it.Item().Value(func(b []byte) error { return json.Unmarshal(b, &f) }) == nil {
				take(f.NextTry)
			}
		}
		it.Close()
		it = txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixEventPending)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()[len(store.PrefixEventPending):]
			if e, err := getEventByRawID(txn, k); err == nil && e.Pending != nil {
				take(e.Pending.NextTry)
			}
		}
		return nil
	})
	return at, !at.IsZero()
}
