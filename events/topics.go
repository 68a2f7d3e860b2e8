package events

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
)

// A topic is a run of conversation whose messages are never more than
// topic_silence apart. It closes when the silence after it has passed, when
// a message after such a silence arrives, or when the agent (the `event`
// tool) or an observer says the matter is done. A closed topic becomes an
// event record pointing at its messages.
//
// The tracker keeps, per channel, a durable cursor: the last message a
// record covers, the last message looked at, and the topic still open, so
// each pass reads only the messages stored since the last one.
type cursor struct {
	Covered string   `json:"covered,omitempty"`
	Scanned string   `json:"scanned,omitempty"`
	Open    *segment `json:"open,omitempty"`
}

// segment is a topic being read: where it starts and ends and who spoke.
type segment struct {
	FirstID   string    `json:"first_id"`
	FirstTime time.Time `json:"first_time"`
	LastID    string    `json:"last_id"`
	LastTime  time.Time `json:"last_time"`
	Count     int       `json:"count"`
	Users     int       `json:"users"` // messages said by people
	Speakers  []string  `json:"speakers,omitempty"`
}

// maxSpeakers bounds the names a record keeps.
const maxSpeakers = 50

func newSegment(m *store.Message) *segment {
	s := &segment{FirstID: m.ID, FirstTime: m.Time}
	s.add(m)
	return s
}

func (s *segment) add(m *store.Message) {
	s.LastID, s.LastTime = m.ID, m.Time
	s.Count++
	if m.Role == store.RoleUser {
		s.Users++
		if m.User != "" && len(s.Speakers) < maxSpeakers && !slices.Contains(s.Speakers, m.User) {
			s.Speakers = append(s.Speakers, m.User)
		}
	}
}

// gapOver reports whether two message times are further apart than the
// silence (either way: history stored out of order splits as well).
func (l *Log) gapOver(a, b time.Time) bool {
	d := a.Sub(b)
	return d > l.silence || -d > l.silence
}

// closeTopics closes every finished topic of a channel as of now; with
// closeOpen it closes the open one too, titled title when it is not empty.
// The caller holds l.mu.
func (l *Log) closeTopics(channel string, now time.Time, title string, closeOpen bool) ([]*Event, error) {
	var cur cursor
	if err := l.db.View(func(txn *badger.Txn) error {
		_, err := getJSON(txn, cursorKey(channel), &cur)
		return err
	}); err != nil {
		return nil, fmt.Errorf("events: cursor of %s: %w", channel, err)
	}
	before := cur
	var done []*segment
	err := l.st.Scan(channel, cur.Scanned, func(m *store.Message) (bool, error) {
		cur.Scanned = m.ID
		if !m.Conversational() {
			return true, nil
		}
		if cur.Open != nil && l.gapOver(m.Time, cur.Open.LastTime) {
			done = append(done, cur.Open)
			cur.Open = nil
		}
		if cur.Open == nil {
			cur.Open = newSegment(m)
		} else {
			cur.Open.add(m)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	forced := false
	if o := cur.Open; o != nil && (closeOpen || now.Sub(o.LastTime) >= l.silence) {
		done = append(done, o)
		cur.Open = nil
		forced = closeOpen && now.Sub(o.LastTime) < l.silence
	}
	if len(done) == 0 && cur.Scanned == before.Scanned {
		return nil, nil
	}
	var closed []*Event
	err = l.db.Update(func(txn *badger.Txn) error {
		for i, s := range done {
			t, how := "", "silence"
			if forced && i == len(done)-1 {
				t, how = title, "tool"
			}
			e, err := l.writeTopic(txn, channel, s, now, t, how)
			if err != nil {
				return err
			}
			if e != nil {
				closed = append(closed, e)
			}
			cur.Covered = s.LastID
		}
		return setJSON(txn, cursorKey(channel), &cur)
	})
	if err != nil {
		return nil, fmt.Errorf("events: close topics of %s: %w", channel, err)
	}
	return closed, nil
}

// writeTopic writes the record of a closed topic. A topic in which no person
// spoke (the agent's follow-up after a closing tool call, a reminder nobody
// answered) is not a matter of its own: it extends the previous record when
// it came within the silence, and is left out otherwise. A topic that
// already has a record is left as it is.
func (l *Log) writeTopic(txn *badger.Txn, channel string, s *segment, now time.Time, title, by string) (*Event, error) {
	if ok, err := exists(txn, firstKey(channel, s.FirstID)); err != nil || ok {
		return nil, err
	}
	if s.Users == 0 {
		prev, err := eventsBefore(txn, channel, LevelEvent, s.FirstTime, 1, nil)
		if err != nil || len(prev) == 0 || l.gapOver(s.FirstTime, prev[0].End) {
			return nil, err
		}
		p := prev[0]
		if s.LastTime.After(p.End) {
			p.End, p.Source.LastMessageID = s.LastTime, s.LastID
			if n := len(p.Runs); n > 0 {
				p.Runs[n-1].Last = max(p.Runs[n-1].Last, s.LastID)
			}
		}
		p.Messages += s.Count
		return nil, putEvent(txn, p)
	}
	e := &Event{
		ID: topicID(channel, s.FirstID), Level: LevelEvent, Title: title,
		Start: s.FirstTime, End: s.LastTime,
		Source:   Source{Channel: channel, FirstMessageID: s.FirstID, LastMessageID: s.LastID},
		Runs:     []Run{{First: s.FirstID, Last: s.LastID}},
		Children: []string{}, Messages: s.Count, Speakers: s.Speakers, ClosedBy: by,
		Pending: &Pending{Title: true, Extract: true}, Written: now,
	}
	e.MemoryState = newMemory(LevelEvent, 0, e.End)
	if err := putEvent(txn, e); err != nil {
		return nil, err
	}
	return e, l.noteRecord(txn, channel, LevelEvent, e.Start)
}

// CloseTopic closes the channel's open topic now, as the `event` tool does
// when the agent or an observer marks the matter done; title, when not
// empty, is kept as the record's title (the writer still scores it). It
// returns nil when no topic was open.
func (l *Log) CloseTopic(channel, title string, now time.Time) (*Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	closed, err := l.closeTopics(channel, now, title, true)
	if err != nil || len(closed) == 0 {
		return nil, err
	}
	l.Kick()
	return closed[len(closed)-1], nil
}

// ContextStart is where main-virtual's context for a channel may begin:
// the first message of the previous topic (SPEC §2). It first closes the
// topics the silence has ended, so a message after a long pause starts a
// new topic and the context holds the one before it. "" means no bound.
func (l *Log) ContextStart(_ context.Context, channel string, now time.Time) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.closeTopics(channel, now, "", false); err != nil {
		return "", err
	}
	var start string
	err := l.db.View(func(txn *badger.Txn) error {
		last, err := lastEvents(txn, channel, LevelEvent, 1, nil)
		if err == nil && len(last) == 1 {
			start = last[0].Source.FirstMessageID
		}
		return err
	})
	return start, err
}

// openTopicSince is when the channel's open topic began (zero when none).
func (l *Log) openTopicSince(txn *badger.Txn, channel string) (time.Time, error) {
	var cur cursor
	if _, err := getJSON(txn, cursorKey(channel), &cur); err != nil || cur.Open == nil {
		return time.Time{}, err
	}
	return cur.Open.FirstTime, nil
}

// noteRecord keeps the rollup markers right when a record of level is
// written at start: the first record of a channel starts its markers; a
// record inside a period already rolled up makes that period dirty, to be
// summarised again.
func (l *Log) noteRecord(txn *badger.Txn, channel string, level Level, start time.Time) error {
	var dm mark
	found, err := getJSON(txn, markKey(channel, LevelDay), &dm)
	if err != nil {
		return err
	}
	if !found {
		for _, lv := range rollupLevels {
			if err := setJSON(txn, markKey(channel, lv), &mark{DoneUntil: l.cal.periodOf(lv, start).start}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range parents(level) {
		var m mark
		if _, err := getJSON(txn, markKey(channel, p), &m); err != nil {
			return err
		}
		if start.Before(m.DoneUntil) {
			if err := txn.Set(periodKey(store.PrefixRollupDirty, channel, p, l.cal.periodOf(p, start).start), nil); err != nil {
				return err
			}
		}
	}
	return nil
}
