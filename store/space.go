package store

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4"
)

// DefaultMinFree is the free space the store keeps on the disk of its data
// dir unless Options.MinFree says otherwise: room for Badger to rotate a
// memtable (its write-ahead log is preallocated), flush it to a table and
// run the compactions that follow — the largest rewrites level 0 (up to 24
// tables of a memtable each when writes come fast) with the level below —
// so that the database never runs out of space in the middle of a write.
const DefaultMinFree = 256 << 20

// memTableSize is Badger's memtable size in this store. Its write-ahead
// log file is twice as large and is preallocated (see guard.allocate).
const memTableSize = 8 << 20

// ErrDiskFull: the disk of the data dir has less free space than the store
// keeps; nothing was written. The error (a *SpaceError) says which disk.
var ErrDiskFull = errors.New("the disk is full")

// ErrDataDirGone: the data dir was removed (or replaced) while the store
// was open; nothing more can be stored.
var ErrDataDirGone = errors.New("the data folder was removed")

// SpaceError is a write refused because the data dir's disk is (nearly)
// full. errors.Is(err, ErrDiskFull) holds.
type SpaceError struct {
	Dir   string // the data dir
	Mount string // the mount point of its disk ("" when unknown)
	Free  uint64 // bytes free for this user
	Need  uint64 // bytes the store keeps free
}

func (e *SpaceError) Error() string {
	disk := "the disk"
	if e.Mount != "" {
		disk = fmt.Sprintf("the disk mounted at %s", e.Mount)
	}
	return fmt.Sprintf("%s, which holds the data folder %s, is full: %s free, and cyan keeps %s free so that its database never runs out of space in the middle of a write; nothing was stored. Free some space there (or raise the disk's size) and writes resume by themselves",
		disk, e.Dir, humanBytes(e.Free), humanBytes(e.Need))
}

func (e *SpaceError) Unwrap() error { return ErrDiskFull }

// GoneError is a write refused because the data dir is gone.
// errors.Is(err, ErrDataDirGone) holds.
type GoneError struct{ Dir string }

func (e *GoneError) Error() string {
	return fmt.Sprintf("the data folder %s was removed while cyan was running; nothing more can be stored. Stop cyan, then restore the folder (cyan restore BACKUP) or start again with an empty one", e.Dir)
}

func (e *GoneError) Unwrap() error { return ErrDataDirGone }

// IsUnavailable reports whether err is a write the store refused because
// of its disk (full) or its data dir (gone): the caller should answer "try
// later" (507 or 503), not "internal error".
func IsUnavailable(err error) bool {
	return errors.Is(err, ErrDiskFull) || errors.Is(err, ErrDataDirGone)
}

// diskInfo is what the guard asks the system about a path.
type diskInfo interface {
	// free returns the bytes available to this user on path's disk.
	free(path string) (uint64, error)
	// identity returns the device and inode of path.
	identity(path string) (dev, ino uint64, err error)
	// allocate reserves the blocks of a file's whole length, so writes
	// through a memory map into it cannot fail for lack of space.
	allocate(path string) error
	// reserve creates a file of size bytes whose blocks are taken.
	reserve(path string, size int64) error
}

// guard checks, before each write of the store, that the data dir is
// still the one opened and that its disk has room; it preallocates
// Badger's write-ahead logs as they appear. Badger writes its files
// through memory maps, and a write into a map of a full disk kills the
// process with SIGBUS instead of returning an error; the guard keeps the
// disk from getting there, so a full disk is an error a caller can show.
type guard struct {
	dir, dbDir string
	minFree    uint64
	sys        diskInfo
	log        *slog.Logger

	mu        sync.Mutex
	dev, ino  uint64          // of dbDir when opened
	allocated map[string]bool // write-ahead logs already preallocated
	mount     string
}

func newGuard(dir string, minFree uint64, sys diskInfo, log *slog.Logger) (*guard, error) {
	g := &guard{dir: dir, dbDir: filepath.Join(dir, "db"), minFree: minFree, sys: sys, log: log, allocated: map[string]bool{}}
	dev, ino, err := sys.identity(g.dbDir)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", g.dbDir, err)
	}
	g.dev, g.ino = dev, ino
	g.mount = mountPoint(dir, sys)
	return g, nil
}

// check returns nil when a write may go ahead.
func (g *guard) check() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.present(); err != nil {
		return err
	}
	g.allocateLogs()
	free, err := g.sys.free(g.dbDir)
	if err != nil {
		return nil // cannot tell: let Badger try
	}
	free = g.keepReserve(free)
	if free < g.minFree {
		return &SpaceError{Dir: g.dir, Mount: g.mount, Free: free, Need: g.minFree}
	}
	return nil
}

// after checks, once a write returned, that it went into the data dir
// still there: a write into the files of a removed folder "succeeds" and
// is lost, and must not be acknowledged.
func (g *guard) after() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.present()
}

// present returns a *GoneError when the database folder is not the one
// opened any more.
func (g *guard) present() error {
	dev, ino, err := g.sys.identity(g.dbDir)
	if err != nil || dev != g.dev || ino != g.ino {
		return &GoneError{Dir: g.dir}
	}
	return nil
}

// allocateLogs preallocates every write-ahead log (*.mem) not yet done.
// A failure (no room) is left for the free-space check to report; a
// filesystem without fallocate is fine, the free-space check then carries
// the whole load.
func (g *guard) allocateLogs() {
	entries, err := os.ReadDir(g.dbDir)
	if err != nil {
		return
	}
	seen := make(map[string]bool, len(g.allocated))
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".mem") {
			continue
		}
		seen[name] = true
		if g.allocated[name] {
			continue
		}
		if err := g.sys.allocate(filepath.Join(g.dbDir, name)); err == nil {
			g.allocated[name] = true
		}
	}
	for name := range g.allocated {
		if !seen[name] {
			delete(g.allocated, name)
		}
	}
}

// ReserveFile is the space reserve in the data dir: a preallocated file the
// store gives back to the disk when something else has filled it, so that
// Badger can finish the table it is writing and close cleanly.
const ReserveFile = "space.reserve"

// reserveSize is the reserve's size: a memtable flush and a margin.
const reserveSize = 2 * memTableSize

// keepReserve makes sure the reserve exists when the disk has room for it
// beyond minFree, and gives it back when the disk is nearly full (less
// than a memtable left: only another program can have taken the store's
// margin). free is the disk's free space now; it returns the free space
// after.
func (g *guard) keepReserve(free uint64) uint64 {
	path := filepath.Join(g.dir, ReserveFile)
	st, err := os.Stat(path)
	have := err == nil && st.Size() == reserveSize
	switch {
	case have && free < memTableSize:
		g.releaseReserve(free)
	case !have && free >= g.minFree+reserveSize:
		if g.sys.reserve(path, reserveSize) != nil {
			return free
		}
	default:
		return free
	}
	if f, err := g.sys.free(g.dbDir); err == nil {
		return f
	}
	return free
}

// releaseReserve gives the reserve back to the disk, logging it.
func (g *guard) releaseReserve(free uint64) {
	if err := os.Remove(filepath.Join(g.dir, ReserveFile)); err == nil {
		g.log.Error("the disk is nearly full; gave back the space reserve so the database can finish what it is writing",
			"free", humanBytes(free), "released", humanBytes(reserveSize), "dir", g.dir)
	}
}

// closeNeed is the free space a clean close needs: Badger flushes the
// memtable to a table, written through a memory map.
func (g *guard) closeNeed() uint64 { return 2 * memTableSize }

// mountPoint is the highest ancestor of dir on the same device.
func mountPoint(dir string, sys diskInfo) string {
	dev, _, err := sys.identity(dir)
	if err != nil {
		return ""
	}
	mount := dir
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		d, _, err := sys.identity(p)
		if err != nil || d != dev {
			return mount
		}
		mount = p
		if p == filepath.Dir(p) {
			return mount
		}
	}
}

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Writable returns nil when the store can take a write now; otherwise the
// error a write would get (ErrDiskFull, ErrDataDirGone). Packages that
// write through DB in bulk check it first.
func (s *Store) Writable() error { return s.guard.check() }

// DiskFree is the free space of the data dir's disk.
func (s *Store) DiskFree() (uint64, error) {
	if s.guard == nil {
		return 0, errors.New("store: in memory, or no statfs here")
	}
	return s.guard.sys.free(s.guard.dbDir)
}

// valueLogFileSize is the size of Badger's value log files in this store.
const valueLogFileSize = 256 << 20

// MinFreeFloor is the least free space Options.MinFree (store.min_free_mb)
// may keep: what Badger may write at once through its memory maps, where
// running out of space kills the process with SIGBUS instead of
// returning an error (minFreeFloor sums it from the options, and a test
// holds this constant to it). The configuration refuses a lower
// store.min_free_mb (config.MinFreeFloorMB, held equal by a test), so
// neither cyan config check nor a start accepts one.
const MinFreeFloor = 250 << 20

// minFreeFloor is what Badger may write at once with options o:
//   - a new write-ahead log when a memtable fills (preallocated whole:
//     twice the memtable);
//   - the flush of a full memtable into a level-0 table;
//   - the level-0 compaction, which rewrites every level-0 table (up to
//     NumLevelZeroTablesStall memtables) with the base level, writing
//     the new tables before removing the old;
//   - the other compactors at once, each one table with the tables
//     below it overlaps (up to LevelSizeMultiplier of them);
//   - one batch into the value log.
func minFreeFloor(o badger.Options) uint64 {
	wal := 2 * o.MemTableSize
	flush := o.MemTableSize
	l0 := int64(o.NumLevelZeroTablesStall)*o.MemTableSize + o.BaseLevelSize
	others := int64(o.NumCompactors-1) * int64(1+o.LevelSizeMultiplier) * o.BaseTableSize
	vlog := 15 * o.MemTableSize / 100 // Badger's largest write batch (db.go)
	return uint64(wal + flush + l0 + others + vlog)
}
