package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CloseWithin closes the store, but never takes longer than limit. A clean
// close flushes Badger's memtables into tables; where that cannot succeed
// it is not tried, and the error says what was left:
//   - the data dir was removed: Badger would retry the flush forever; what
//     was written since the removal is lost (and was never acknowledged);
//   - the disk is full: the flush would need space the disk lacks; the
//     recent writes stay in the write-ahead logs, which were synced as each
//     write was acknowledged, and are replayed at the next start;
//   - the close did not end within limit (a disk too slow, or failing):
//     the same holds.
//
// In each case the lock stays held until the process exits. A nil error
// means a clean close.
func (s *Store) CloseWithin(limit time.Duration) error {
	if g := s.guard; g != nil {
		g.mu.Lock()
		gone := g.present()
		g.mu.Unlock()
		if gone != nil {
			return fmt.Errorf("store: not closed: %w; whatever was written after the removal is lost", gone)
		}
		free, err := g.sys.free(g.dbDir)
		if err == nil && free < g.closeNeed() {
			g.mu.Lock()
			g.releaseReserve(free) // for the flush
			g.mu.Unlock()
			free, err = g.sys.free(g.dbDir)
		}
		if err == nil && free < g.closeNeed() {
			return fmt.Errorf("store: not closed: the disk is full (%s free in %s, a clean close needs %s); the recent writes stay in the write-ahead logs %s and are replayed at the next start: %w",
				humanBytes(free), g.dbDir, humanBytes(g.closeNeed()), s.walFiles(), ErrDiskFull)
		}
	}
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return fmt.Errorf("store: the database did not close within %s (is its disk failing or very slow?); the recent writes stay in the write-ahead logs %s and are replayed at the next start", limit, s.walFiles())
	}
}

// walFiles names the write-ahead logs of the database folder.
func (s *Store) walFiles() string {
	if s.guard == nil {
		return "(none: in memory)"
	}
	entries, err := os.ReadDir(s.guard.dbDir)
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".mem") {
			names = append(names, filepath.Join(s.guard.dbDir, e.Name()))
		}
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}
