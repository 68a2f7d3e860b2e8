package store

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/google/uuid"

	"github.com/cyan-agent/cyan/journal"
)

// Options configure Open.
type Options struct {
	// Dir is the data dir; the database lives in Dir/db. Ignored in memory.
	Dir string
	// InMemory keeps everything in memory (tests).
	InMemory bool
	// Logger receives Badger's warnings and errors; nil discards them.
	Logger *slog.Logger
	// Now is the clock of the journal's events and of DiskSize's count
	// (nil: time.Now).
	Now func() time.Time
	// MinFree is the free space (bytes) the store keeps on its disk: a
	// write that would leave less is refused with ErrDiskFull (0:
	// DefaultMinFree).
	MinFree uint64
	// MemoryMB is what Badger may hold in memory, in megabytes: its
	// memtables, block cache and index cache (0: DefaultMemoryMB).
	MemoryMB int

	// tune changes Badger's options (tests only).
	tune func(badger.Options) badger.Options
}

// Store is the open database of one data dir.
type Store struct {
	db   *badger.DB
	lock *dirLock
	// guard refuses writes on a full disk or a removed data dir (nil in
	// memory).
	guard *guard
	ids   idGen
	log   *slog.Logger
	now   func() time.Time

	// dbDir is the database's folder ("" in memory), set at open; size
	// is DiskSize's last count (size.go).
	dbDir string
	size  sizeCache

	// wmu serialises message writes, so the arrival log's order is the
	// order of commits: a reader that has seen seq n has seen every
	// message before it.
	wmu sync.Mutex
	seq uint64 // the last arrival seq written

	// gmu guards the group commit (commit.go): the Appends waiting for
	// the commit under way, and whether one is.
	gmu        sync.Mutex
	gcond      *sync.Cond
	queue      []*pendingWrite
	committing bool

	journal *journal.Journal

	format int // the format recorded (format.go), under wmu

	// dir is the data dir ("" in memory); the fields below keep its
	// record (state.go), under wmu.
	dir       string
	counted   uint64     // messages counted at open
	seqOpen   uint64     // s.seq then
	manifest  int64      // the MANIFEST's size at the last checkpoint
	short     *Shortfall // this open found fewer messages than recorded
	prior     *state     // the record found at open
	vlogFull  int64      // the size Badger gives a value log being written
	nextWAL   uint64     // the id of the next write-ahead log (0: unknown)
	nextVlog  uint64     // the id of the next value log (0: unknown)
	emptyWAL  uint64     // 1 + the id of the newest log empty at the checkpoint
	emptyVlog uint64     // (0: none)
}

// Open opens (creating if needed) the store of a data dir and takes its
// lock. A second Open of the same dir, in this or another process, fails
// with an error wrapping ErrLocked.
func Open(o Options) (*Store, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var (
		opts badger.Options
		lock *dirLock
	)
	if o.InMemory {
		opts = badger.DefaultOptions("").WithInMemory(true)
	} else {
		if o.Dir == "" {
			return nil, errors.New("store: no data dir given; set CYAN_DATA_DIR")
		}
		opts = badger.DefaultOptions(filepath.Join(o.Dir, "db"))
	}
	opts = opts.
		// Badger's metrics are off: every read and write updated its
		// process-wide expvar maps, 2% of a 300,000-message import's CPU
		// and about 4% of a million's (mostly the count of bloom filter
		// checks of the external-id lookups). The store's size and
		// Badger's compactions are read without them (size.go).
		WithMetricsEnabled(false).
		WithSyncWrites(true).
		WithLogger(badgerLogger{log}).
		WithMemTableSize(memTableSize).
		WithValueLogFileSize(valueLogFileSize).
		WithNumVersionsToKeep(1).
		// Level 0 is compacted at twenty tables, not Badger's five. Each
		// memtable spans the whole key space (every message writes its
		// msg, mid and ext keys and an arrival entry), so each level-0
		// compaction rewrites all of level 1; waiting for four times the
		// tables quarters those rewrites. Importing 500,000 messages took
		// 50 µs of CPU a message at ten tables instead of 56 at five, and
		// a million took 29–36 µs at twenty against 34–38 at ten
		// (BenchmarkImport, alternate runs). Writes stall at 24 tables,
		// four memtables later, which MinFreeFloor counts. A read checks
		// each level-0 table's bloom filter: up to 19 of them, not 9.
		WithNumLevelZeroTables(20).
		WithNumLevelZeroTablesStall(24).
		// Every block read is checked against its checksum (a flipped
		// bit is an error, never a silently wrong or missing message);
		// whole tables are checked before open (check.go).
		WithChecksumVerificationMode(options.OnBlockRead).
		WithVerifyValueChecksum(true)
	opts = memoryOptions(opts, o.MemoryMB)
	if o.tune != nil {
		opts = o.tune(opts)
	}
	var last *state
	if !o.InMemory {
		if err := os.MkdirAll(o.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("store: create data dir %s: %w (check its permissions or set CYAN_DATA_DIR)", o.Dir, err)
		}
		l, err := lockDir(o.Dir)
		if err != nil {
			return nil, err
		}
		lock = l
		err = checkDB(o.Dir, 2*opts.MemTableSize, 2*opts.ValueLogFileSize, log)
		if err == nil {
			err = repair(filepath.Join(o.Dir, "db"), log)
		}
		if err == nil {
			last, err = readState(o.Dir)
		}
		if err != nil {
			lock.release()
			return nil, err
		}
	}
	db, err := openBadger(opts, o.Dir)
	if err != nil {
		lock.release()
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, fmt.Errorf("store: %s: %w", o.Dir, ErrLocked)
		}
		return nil, fmt.Errorf("store: open database in %s: %w", o.Dir, err)
	}
	s := &Store{db: db, lock: lock, log: log, now: o.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if !o.InMemory {
		s.dbDir = filepath.Join(o.Dir, "db")
	}
	s.gcond = sync.NewCond(&s.gmu)
	if sys := defaultDisk(); !o.InMemory && sys != nil {
		s.guard, err = newGuard(o.Dir, cmp.Or(o.MinFree, DefaultMinFree), sys, log)
		if err == nil {
			err = s.guard.check()
			if IsUnavailable(err) {
				log.Warn("the store opened, but cannot take writes yet", "err", err)
				err = nil
			}
		}
	}
	if err == nil {
		s.format, err = readFormat(db)
	}
	if err == nil {
		err = s.seedIDs()
	}
	if err == nil {
		err = s.seedArrivals()
	}
	if err == nil && !o.InMemory {
		s.dir = o.Dir
		err = s.startCount(last, 2*opts.ValueLogFileSize, s.now())
	}
	if err == nil {
		s.journal, err = journal.Open(journal.Options{DB: db, Prefix: PrefixJournal, Now: o.Now, Logger: log})
	}
	if err != nil {
		_ = db.Close()
		lock.release()
		return nil, err
	}
	return s, nil
}

// Journal is the event log kept in this store. Every message stored
// through Append is posted on it (journal.MessageIn for what people and
// the platform say, MessageOut for the agent's answers, MessageTool for
// tool results); history stored through AppendHistory or Import is one
// journal.MessagesImported.
func (s *Store) Journal() *journal.Journal { return s.journal }

// Close writes the journal's pending events, then flushes and closes the
// database and releases the lock.
func (s *Store) Close() error {
	_ = s.journal.Close()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.db.Close()
	if err == nil && s.dir != "" {
		if cerr := s.checkpoint(true); cerr != nil {
			s.log.Warn("could not record the database's state at close; the next start checks less", "err", cerr)
		}
	}
	s.lock.release()
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// DB is the underlying database, for packages that keep their own key
// space (registered in keys.go).
func (s *Store) DB() *badger.DB { return s.db }

// seedIDs continues the id sequence after the newest stored message, so ids
// stay ordered even if the clock stepped back across a restart.
func (s *Store) seedIDs() error {
	return s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: []byte(prefixMsgID)})
		defer it.Close()
		it.Seek(prefixEnd([]byte(prefixMsgID)))
		if !it.Valid() {
			return nil
		}
		k := it.Item().Key()
		id, err := uuid.FromBytes(k[len(prefixMsgID):])
		if err != nil {
			return fmt.Errorf("store: corrupt message index key %x: %w", k, err)
		}
		s.ids.seed(id)
		return nil
	})
}

// badgerLogger forwards Badger's warnings and errors to slog; its info and
// debug chatter is dropped.
type badgerLogger struct{ log *slog.Logger }

func (l badgerLogger) Errorf(f string, a ...any) {
	l.log.Error(strings.TrimSpace(fmt.Sprintf(f, a...)))
}
func (l badgerLogger) Warningf(f string, a ...any) {
	l.log.Warn(strings.TrimSpace(fmt.Sprintf(f, a...)))
}
func (badgerLogger) Infof(string, ...any)  {}
func (badgerLogger) Debugf(string, ...any) {}
