package events

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
)

// BuildReport is what BuildHistory did.
type BuildReport struct {
	Messages int `json:"messages"` // conversation messages in the range
	Topics   int `json:"topics"`   // topics found
	Written  int `json:"written"`  // records written
	Kept     int `json:"kept"`     // topics that already had the same record
	Replaced int `json:"replaced"` // records of partial topics replaced
	// Pass is the processing that followed: titles, extraction, rollups.
	Pass *Report `json:"pass"`
}

// BuildHistory builds the event records a channel's history implies, then
// titles them and runs the rollups they make due. It is the hook an importer
// calls when an import finishes (messages stored with store.AppendHistory,
// or any other way: it reads the channel by message time, not by id).
//
// The messages whose time is in [from, to] (a zero bound is open) are split
// into topics by topic_silence; the last one counts as closed when the
// silence after it has passed by now. A topic whose record already exists
// is kept, so building twice adds nothing; a record that covers only part
// of a topic (closed while the import was still storing it) is replaced.
// Titling failures leave the records pending for the daemon to retry; the
// report says so.
func (l *Log) BuildHistory(ctx context.Context, channel string, from, to time.Time) (*BuildReport, error) {
	if err := store.ValidChannel(channel); err != nil {
		return nil, err
	}
	now := l.now()
	var msgs []*store.Message
	err := l.st.Scan(channel, "", func(m *store.Message) (bool, error) {
		if m.Conversational() && !m.Time.Before(from) && (to.IsZero() || !m.Time.After(to)) {
			msgs = append(msgs, &store.Message{ID: m.ID, Role: m.Role, User: m.User, Text: "", Empty: true, Time: m.Time})
		}
		return ctx.Err() == nil, nil
	})
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	slices.SortStableFunc(msgs, func(a, b *store.Message) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return compareIDs(a.ID, b.ID)
	})
	var segs []*segment
	for _, m := range msgs {
		if n := len(segs); n > 0 && !l.gapOver(m.Time, segs[n-1].LastTime) {
			segs[n-1].add(m)
			continue
		}
		segs = append(segs, newSegment(m))
	}
	var covered cursor
	if err := l.db.View(func(txn *badger.Txn) error {
		_, err := getJSON(txn, cursorKey(channel), &covered)
		return err
	}); err != nil {
		return nil, err
	}
	if n := len(segs); n > 0 && now.Sub(segs[n-1].LastTime) < l.silence && covered.Covered < segs[n-1].LastID {
		segs = segs[:n-1] // still open (and not closed by the tracker): the tracker closes it
	}
	rep := &BuildReport{Messages: len(msgs), Topics: len(segs)}
	// Small transactions: a write transaction's reads grow with its writes.
	const perTxn = 100
	l.mu.Lock()
	last := ""
	for i := 0; i < len(segs) && err == nil; i += perTxn {
		err = l.db.Update(func(txn *badger.Txn) error {
			for _, s := range segs[i:min(i+perTxn, len(segs))] {
				if err := l.buildTopic(txn, channel, s, now, rep); err != nil {
					return err
				}
				last = max(last, s.LastID)
			}
			return nil
		})
	}
	if err == nil && last != "" {
		// The tracker must not read this history again as a live topic.
		err = l.db.Update(func(txn *badger.Txn) error {
			var cur cursor
			if _, err := getJSON(txn, cursorKey(channel), &cur); err != nil || last <= cur.Scanned {
				return err
			}
			return setJSON(txn, cursorKey(channel), &cursor{Covered: last, Scanned: last})
		})
	}
	l.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("events: build history of %s: %w", channel, err)
	}
	rep.Pass, err = l.Process(ctx, now, ProcessOptions{Rollups: true})
	return rep, err
}

// buildTopic writes one history topic's record, keeping an identical one
// and replacing records that cover only part of it.
func (l *Log) buildTopic(txn *badger.Txn, channel string, s *segment, now time.Time, rep *BuildReport) error {
	inside, err := eventsIn(txn, channel, LevelEvent, s.FirstTime, s.LastTime.Add(time.Nanosecond))
	if err != nil {
		return err
	}
	for _, e := range inside {
		if e.Source.FirstMessageID == s.FirstID && e.Source.LastMessageID == s.LastID {
			rep.Kept++
			return nil
		}
	}
	for _, e := range inside {
		if !e.End.After(s.LastTime) {
			if err := deleteEvent(txn, e); err != nil {
				return err
			}
			rep.Replaced++
		}
	}
	if s.Users == 0 {
		return nil
	}
	e, err := l.writeTopic(txn, channel, s, now, "", "history")
	if err != nil {
		return err
	}
	if e != nil {
		rep.Written++
	}
	return nil
}

func compareIDs(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
