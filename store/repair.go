package store

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// repair makes a database folder that a killed process left behind
// openable again, before Badger sees it. Badger creates a memtable's
// write-ahead log (*.mem) or a value log (*.vlog) and only then writes its
// header; a kill between the two leaves a zero-length file that Badger
// refuses to open ("while opening memtables … Create a new file"). Badger
// also deletes a flushed log by cutting it to zero bytes and then removing
// it, so a kill between the two leaves one whose writes are in a table
// (checkDB has checked that). Either holds nothing to replay, so removing
// it loses nothing. Each removal is logged. A folder that does not exist yet is left to Badger to create.
func repair(dbDir string, log *slog.Logger) error {
	entries, err := os.ReadDir(dbDir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: read %s: %w", dbDir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".mem") && !strings.HasSuffix(name, ".vlog") {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.Size() != 0 {
			continue
		}
		path := filepath.Join(dbDir, name)
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("store: remove the empty leftover %s of an interrupted run: %w (remove it by hand)", path, err)
		}
		log.Warn("removed an empty file left by an interrupted run; it holds nothing to replay", "file", path)
	}
	return nil
}
