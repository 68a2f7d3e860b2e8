package store

import (
	"hash/fnv"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4/table"
)

// The store opens Badger with its metrics off (Options.WithMetricsEnabled
// in Open): they are process-wide expvar maps that every read and write
// updated, 2–4% of the CPU of a bulk import. Two things used to read them:
// DB().Size(), which with metrics off reads 0 (db.go, y/metrics.go of
// github.com/dgraph-io/badger/v4 v4.9.6), and the expvar of compactions
// running, which then never moves. DiskSize and TreeMark measure the same
// without them.

// sizeFresh is how long DiskSize answers from its last count: a scrape
// reads both parts, one after the other, and needs one folder read.
const sizeFresh = time.Second

// sizeCache is DiskSize's last count.
type sizeCache struct {
	mu        sync.Mutex
	at        time.Time
	lsm, vlog int64
}

// DiskSize is the size on disk of the database's tables (lsm: its *.sst
// files) and of its value logs (vlog: its *.vlog files), summed from the
// files' sizes as Badger's own DB.Size counted them (once a minute, from
// its metrics). A value log being written counts at its preallocated
// size. The count is at most a second old; in memory both are 0.
func (s *Store) DiskSize() (lsm, vlog int64) {
	if s.dbDir == "" {
		return 0, 0
	}
	c := &s.size
	c.mu.Lock()
	defer c.mu.Unlock()
	now := s.now()
	if !c.at.IsZero() && now.Sub(c.at) < sizeFresh && !now.Before(c.at) {
		return c.lsm, c.vlog
	}
	f := s.scanDB(true)
	c.at, c.lsm, c.vlog = now, f.lsm, f.vlog
	return c.lsm, c.vlog
}

// TreeMark is a mark of Badger's tree of tables: it changes when a table
// is written (a memtable flushed, a compaction writing its output, table
// by table, into the folder) and when a compaction ends (its tables leave
// their levels, the new ones join). Two equal marks read some time apart
// say no compaction ended or wrote a table in between: a compaction writes
// a table at least every few seconds (each is a few megabytes, built in
// memory and written whole), so a mark unchanged for longer means none
// runs. In memory only the levels count.
func (s *Store) TreeMark() uint64 {
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		h.Write(b[:])
	}
	for _, l := range s.db.Levels() {
		put(uint64(l.NumTables))
		put(uint64(l.Size))
	}
	if s.dbDir != "" {
		f := s.scanDB(false)
		put(uint64(f.tables))
		put(f.newest)
	}
	return h.Sum64()
}

// dbFiles is what scanDB found in the database's folder.
type dbFiles struct {
	lsm, vlog int64  // bytes of *.sst and of *.vlog files
	tables    int    // *.sst files
	newest    uint64 // the highest table id among them
}

// scanDB reads the database's folder (Badger keeps tables and value logs
// in it, no deeper); the files' sizes only when sizes is set (a stat
// each). A file removed while it reads is skipped.
func (s *Store) scanDB(sizes bool) dbFiles {
	var f dbFiles
	entries, err := os.ReadDir(s.dbDir)
	if err != nil {
		return f
	}
	for _, e := range entries {
		name := e.Name()
		sst := strings.HasSuffix(name, ".sst")
		if !sst && !strings.HasSuffix(name, ".vlog") {
			continue
		}
		if !e.Type().IsRegular() {
			continue
		}
		if sizes {
			info, err := e.Info()
			if err != nil {
				continue
			}
			if !sst {
				f.vlog += info.Size()
				continue
			}
			f.lsm += info.Size()
		}
		if !sst {
			continue
		}
		f.tables++
		if id, ok := table.ParseFileID(name); ok {
			f.newest = max(f.newest, id)
		}
	}
	return f
}
