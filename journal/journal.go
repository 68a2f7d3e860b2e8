package journal

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cyan-agent/cyan/glob"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Options configure Open.
type Options struct {
	// DB keeps the durable events (nil: memory only, for tests). Prefix is
	// the key space the journal owns in it.
	DB     *badger.DB
	Prefix string
	// Ring is how many of the newest events stay in memory (default
	// 4096); Retain how many durable ones the store keeps (default
	// 100000).
	Ring   int
	Retain uint64
	Now    func() time.Time // nil: time.Now
	Logger *slog.Logger     // nil: discard
}

// Journal is the event log. Its methods are safe for concurrent use; Post
// on a nil *Journal does nothing, so a part built without one still runs.
type Journal struct {
	o   Options
	log *slog.Logger

	mu       sync.Mutex
	next     uint64  // the id of the next event
	reserved uint64  // ids up to this one are reserved in the store
	ring     []Event // newest last
	pending  []Event // durable events not yet written
	flushed  uint64  // every durable event up to this id is written
	lostTr   uint64  // the newest transient event that left the ring
	trimmed  uint64  // durable events up to this id were removed from the store
	posted   chan struct{}
	closed   bool

	kick    chan struct{}
	done    chan struct{}
	flushMu sync.Mutex // one batch at a time, in order
}

// reserveBlock is how many ids are reserved in the store at a time, so ids
// keep growing across a restart even for events never written (deltas).
const reserveBlock = 1024

// Open loads the journal's position from the store and starts its writer.
// Close stops it after writing what is pending.
func Open(o Options) (*Journal, error) {
	if o.Ring <= 0 {
		o.Ring = 4096
	}
	if o.Retain == 0 {
		o.Retain = 100000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.DB != nil && o.Prefix == "" {
		return nil, errors.New("journal: a key prefix is required with a database")
	}
	j := &Journal{o: o, log: o.Logger, next: 1, posted: make(chan struct{}), kick: make(chan struct{}, 1), done: make(chan struct{})}
	if o.DB != nil {
		last, first, reserved, err := j.position()
		if err != nil {
			return nil, err
		}
		j.next = max(last, reserved) + 1
		j.reserved = j.next - 1
		j.flushed = last
		if first > 0 {
			j.trimmed = first - 1
		} else {
			j.trimmed = last
		}
	}
	go j.writer()
	return j, nil
}

// Post stamps e with the next id and the time, keeps it, wakes the
// subscribers and returns the id. It never waits for a reader.
func (j *Journal) Post(e Event) uint64 {
	if j == nil {
		return 0
	}
	e.Time = j.o.Now()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return 0
	}
	if j.o.DB != nil && j.next > j.reserved {
		if err := j.reserve(j.next + reserveBlock); err != nil {
			j.log.Error("journal: reserving ids failed; ids may repeat after a restart", "err", err)
		}
	}
	e.ID = j.next
	j.next++
	j.ring = append(j.ring, e)
	if !e.Transient && j.o.DB != nil {
		j.pending = append(j.pending, e)
		select {
		case j.kick <- struct{}{}:
		default:
		}
	} else if !e.Transient {
		j.flushed = e.ID
	}
	j.evict()
	close(j.posted)
	j.posted = make(chan struct{})
	return e.ID
}

// PostTransient posts an event that lives only in memory (a reply delta).
func (j *Journal) PostTransient(e Event) uint64 {
	e.Transient = true
	return j.Post(e)
}

// Last is the id of the newest event (0 when there is none).
func (j *Journal) Last() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.next - 1
}

// evict trims the ring to its size, keeping events not yet written.
// Callers hold j.mu.
func (j *Journal) evict() {
	n := 0
	for len(j.ring)-n > j.o.Ring {
		e := j.ring[n]
		if !e.Transient && e.ID > j.flushed {
			break
		}
		if e.Transient {
			j.lostTr = e.ID
		}
		n++
	}
	if n > 0 {
		j.ring = slices.Delete(j.ring, 0, n)
	}
}

// Filter selects events. Zero values select everything.
type Filter struct {
	Kinds []Kind
	// Channel is a pattern of channels: "home", "qq:group:*" ("*" matches
	// any run of characters). Events of no channel match only "".
	Channel string
}

// Match reports whether e passes the filter.
func (f Filter) Match(e Event) bool {
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, e.Kind) {
		return false
	}
	return f.Channel == "" || glob.Channel(f.Channel, e.Channel)
}

// transientPossible reports whether the filter may select a transient
// event (one of unknown kind, or a reply delta).
func (f Filter) transientPossible() bool {
	return len(f.Kinds) == 0 || slices.Contains(f.Kinds, ReplyDelta) ||
		slices.ContainsFunc(f.Kinds, func(k Kind) bool { return !knownDurable[k] })
}

var knownDurable = map[Kind]bool{MessageIn: true, MessageOut: true, MessageTool: true, MessagesImported: true, TurnDone: true,
	MemoryChanged: true, RecordsChanged: true, PlanDue: true, ProactiveSpeech: true, ToolApproval: true,
	BridgeState: true, VoiceState: true, VoiceSpeech: true, PartState: true, BackupDone: true}

// Since returns up to limit events after id that pass f, oldest first:
// from memory when they are there, else from the store. When events owed
// to the reader cannot be read any more, the answer starts with a Gap
// event (ID 0). limit <= 0 means 1000.
func (j *Journal) Since(after uint64, f Filter, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = 1000
	}
	j.mu.Lock()
	ringFirst := j.next
	if len(j.ring) > 0 {
		ringFirst = j.ring[0].ID
	}
	lostTr, trimmed := j.lostTr, j.trimmed
	var recent []Event
	for i := len(j.ring) - 1; i >= 0 && j.ring[i].ID > after; i-- {
		if f.Match(j.ring[i]) {
			recent = append(recent, j.ring[i])
		}
	}
	j.mu.Unlock()
	slices.Reverse(recent)

	var out []Event
	if after+1 < ringFirst {
		var gap *GapInfo
		switch {
		case j.o.DB != nil && after < trimmed:
			gap = &GapInfo{After: after, Before: trimmed + 1, Reason: "older events are no longer kept"}
		case j.o.DB == nil:
			gap = &GapInfo{After: after, Before: ringFirst, Reason: "older events are no longer in memory"}
		case lostTr > after && f.transientPossible():
			gap = &GapInfo{After: after, Before: lostTr + 1, Reason: "live reply text that was not read in time is gone (the stored messages are not)"}
		}
		if gap != nil {
			g := New(Gap, "", gap)
			g.Time = j.o.Now()
			out = append(out, g)
		}
		if j.o.DB != nil {
			stored, err := j.load(after, ringFirst, f, limit)
			if err != nil {
				return nil, err
			}
			out = append(out, stored...)
		}
	}
	n := 0
	for _, e := range out {
		if e.Kind != Gap {
			n++
		}
	}
	if room := limit - n; room < len(recent) {
		recent = recent[:max(room, 0)]
	}
	return append(out, recent...), nil
}

// Subscription follows the journal from a cursor. It holds no buffer, so
// it can never overflow: a reader that falls behind reads the events it
// missed from the store.
type Subscription struct {
	j      *Journal
	f      Filter
	cursor uint64
	told   uint64 // the end of the last gap reported
}

// Subscribe follows events after id `after` that pass f (after =
// j.Last() for only what comes next).
func (j *Journal) Subscribe(after uint64, f Filter) *Subscription {
	return &Subscription{j: j, f: f, cursor: after}
}

// Cursor is the id of the last event returned.
func (s *Subscription) Cursor() uint64 { return s.cursor }

// Next waits until there are events after the cursor, returns up to 256 of
// them (a Gap first when some were lost) and moves the cursor past them.
// It returns ctx's error when ctx ends, and ErrClosed once the journal is
// closed and everything is read.
func (s *Subscription) Next(ctx context.Context) ([]Event, error) {
	for {
		s.j.mu.Lock()
		wait, last, closed := s.j.posted, s.j.next-1, s.j.closed
		s.j.mu.Unlock()
		if last > s.cursor {
			const batch = 256
			evs, err := s.j.Since(s.cursor, s.f, batch)
			if err != nil {
				return nil, err
			}
			n := 0
			if len(evs) > 0 && evs[0].Kind == Gap {
				var g GapInfo
				if evs[0].Decode(&g) == nil && g.Before <= s.told {
					evs = evs[1:] // reported already
				} else {
					s.told = g.Before
				}
			}
			for _, e := range evs {
				if e.Kind != Gap {
					n++
					s.cursor = max(s.cursor, e.ID)
				}
			}
			if n < batch {
				// Every event up to last was looked at.
				s.cursor = max(s.cursor, last)
			}
			if len(evs) > 0 {
				return evs, nil
			}
			continue
		}
		if closed {
			return nil, ErrClosed
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wait:
		}
	}
}

// ErrClosed is returned by Next once the journal is closed.
var ErrClosed = errors.New("journal: closed")

// Close writes what is pending and stops the writer; Post does nothing
// after it.
func (j *Journal) Close() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	j.closed = true
	close(j.posted)
	j.posted = make(chan struct{})
	j.mu.Unlock()
	close(j.kick)
	<-j.done
	return nil
}

// writer writes pending events in batches, one commit for all that came
// meanwhile, until Close.
func (j *Journal) writer() {
	defer close(j.done)
	for range j.kick {
		j.flush()
	}
	j.flush()
}

func (j *Journal) flush() {
	j.flushMu.Lock()
	defer j.flushMu.Unlock()
	j.mu.Lock()
	batch := j.pending
	j.pending = nil
	j.mu.Unlock()
	if len(batch) == 0 || j.o.DB == nil {
		return
	}
	err := j.o.DB.Update(func(txn *badger.Txn) error {
		for _, e := range batch {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if err := txn.Set(j.key(e.ID), b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		j.log.Error("journal: writing events failed; readers that fall behind may miss them", "err", err, "events", len(batch))
	}
	last := batch[len(batch)-1].ID
	j.mu.Lock()
	j.flushed = max(j.flushed, last)
	j.evict()
	trimmed := j.trimmed
	j.mu.Unlock()
	if last > j.o.Retain && last-j.o.Retain > trimmed+j.o.Retain/8 {
		j.trim(last - j.o.Retain)
	}
}

// trim removes the durable events up to id upTo.
func (j *Journal) trim(upTo uint64) {
	wb := j.o.DB.NewWriteBatch()
	defer wb.Cancel()
	err := j.o.DB.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(j.o.Prefix + "e")})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().KeyCopy(nil)
			if j.idOf(k) > upTo {
				break
			}
			if err := wb.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		j.log.Warn("journal: trimming old events failed", "err", err)
		return
	}
	j.mu.Lock()
	j.trimmed = max(j.trimmed, upTo)
	j.mu.Unlock()
}

func (j *Journal) key(id uint64) []byte {
	k := make([]byte, len(j.o.Prefix)+1+8)
	copy(k, j.o.Prefix+"e")
	binary.BigEndian.PutUint64(k[len(j.o.Prefix)+1:], id)
	return k
}

func (j *Journal) idOf(k []byte) uint64 {
	return binary.BigEndian.Uint64(k[len(j.o.Prefix)+1:])
}

func (j *Journal) reserveKey() []byte { return []byte(j.o.Prefix + "r") }

// reserve records that ids up to upTo may be in use. Callers hold j.mu.
func (j *Journal) reserve(upTo uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], upTo)
	if err := j.o.DB.Update(func(txn *badger.Txn) error { return txn.Set(j.reserveKey(), b[:]) }); err != nil {
		return fmt.Errorf("journal: reserve ids: %w", err)
	}
	j.reserved = upTo
	return nil
}

// position reads the ids of the newest and oldest stored events and the
// reservation.
func (j *Journal) position() (last, first, reserved uint64, err error) {
	err = j.o.DB.View(func(txn *badger.Txn) error {
		prefix := []byte(j.o.Prefix + "e")
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		it.Rewind()
		if it.Valid() {
			first = j.idOf(it.Item().Key())
		}
		it.Close()
		rit := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true})
		rit.Seek(append(append([]byte{}, prefix...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
		if rit.Valid() {
			last = j.idOf(rit.Item().Key())
		}
		rit.Close()
		item, err := txn.Get(j.reserveKey())
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if len(v) == 8 {
				reserved = binary.BigEndian.Uint64(v)
			}
			return nil
		})
	})
	if err != nil {
		err = fmt.Errorf("journal: open: %w", err)
	}
	return last, first, reserved, err
}

// load reads stored events with ids in (after, before) that pass f.
func (j *Journal) load(after, before uint64, f Filter, limit int) ([]Event, error) {
	var out []Event
	err := j.o.DB.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(j.o.Prefix + "e"), PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Seek(j.key(after + 1)); it.Valid() && len(out) < limit; it.Next() {
			if j.idOf(it.Item().Key()) >= before {
				break
			}
			var e Event
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &e) }); err != nil {
				return err
			}
			if f.Match(e) {
				out = append(out, e)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("journal: read after %d: %w", after, err)
	}
	return out, nil
}
