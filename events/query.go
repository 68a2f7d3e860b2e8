package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
)

// Filter selects records to list.
type Filter struct {
	Level   Level  // "" for every level
	Channel string // "" for every channel
	Limit   int    // the newest Limit records; 0: 100
}

// Events lists records, oldest first: the newest Limit that match, with
// their labels and their memory's R as of now.
func (l *Log) Events(f Filter, now time.Time) ([]*Event, error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	type ref struct {
		key   []byte
		start time.Time
	}
	var refs []ref
	out := []*Event{}
	err := l.db.View(func(txn *badger.Txn) error {
		prefix := []byte(store.PrefixEvent)
		if f.Channel != "" {
			prefix = channelPrefix(store.PrefixEvent, f.Channel)
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			// … \0 level(1) start(8) id(16)
			if len(k) < 26 || k[len(k)-26] != 0 {
				continue
			}
			if f.Level != "" && k[len(k)-25] != f.Level.code() {
				continue
			}
			refs = append(refs, ref{key: bytes.Clone(k), start: timeOfBytes(k[len(k)-24 : len(k)-16])})
		}
		it.Close()
		slices.SortStableFunc(refs, func(a, b ref) int { return a.start.Compare(b.start) })
		if len(refs) > f.Limit {
			refs = refs[len(refs)-f.Limit:]
		}
		for _, r := range refs {
			e := new(Event)
			if _, err := getJSON(txn, r.key, e); err != nil {
				return fmt.Errorf("decode record %x: %w", r.key, err)
			}
			out = append(out, l.present(e, now))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events: list: %w", err)
	}
	return out, nil
}

// Event returns one record by id.
func (l *Log) Event(id string, now time.Time) (*Event, error) {
	var e *Event
	err := l.db.View(func(txn *badger.Txn) error {
		var err error
		e, err = getEvent(txn, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return l.present(e, now), nil
}

// present fills what is computed when a record is read.
func (l *Log) present(e *Event, now time.Time) *Event {
	e.Label = l.cal.label(e.Level, e.Start)
	e.MemoryState.R = e.MemoryState.Retrievability(now)
	if e.Children == nil {
		e.Children = []string{}
	}
	return e
}

// MarshalJSON keeps times in the calendar's zone out of the wire format:
// records are written in UTC.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	p := plain(e)
	p.Start, p.End, p.Written = p.Start.UTC(), p.End.UTC(), p.Written.UTC()
	return json.Marshal(p)
}
