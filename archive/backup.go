package archive

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// Formats and versions this package writes and reads.
const (
	BackupFormat  = "cyan-backup"
	BackupVersion = 1
	ExportFormat  = "cyan-export"
	ExportVersion = 1
)

// Header is the first line of a backup or an export.
type Header struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Created time.Time `json:"created"`
	Cyan    string    `json:"cyan,omitempty"` // the version that wrote it
}

// BackupInfo says what a backup holds.
type BackupInfo struct {
	Created time.Time `json:"created"`
	// Bytes is the size of the backup written.
	Bytes int64 `json:"bytes"`
}

// WriteBackup writes a consistent backup of the whole database to w while
// the store is in use (Badger's backup stream at one read timestamp).
func WriteBackup(st *store.Store, w io.Writer, version string, now time.Time) (BackupInfo, error) {
	cw := &countWriter{w: w}
	zw := gzip.NewWriter(cw)
	h := Header{Format: BackupFormat, Version: BackupVersion, Created: now.UTC(), Cyan: version}
	b, _ := json.Marshal(h)
	if _, err := zw.Write(append(b, '\n')); err != nil {
		return BackupInfo{}, fmt.Errorf("archive: write the backup: %w", err)
	}
	if _, err := st.DB().Backup(zw, 0); err != nil {
		return BackupInfo{}, fmt.Errorf("archive: back up the database: %w", err)
	}
	if err := zw.Close(); err != nil {
		return BackupInfo{}, fmt.Errorf("archive: write the backup: %w", err)
	}
	return BackupInfo{Created: h.Created, Bytes: cw.n}, nil
}

// BackupFile writes a backup to path through a temporary file in the same
// folder, synced and renamed into place, so path is whole or absent.
func BackupFile(st *store.Store, path, version string, now time.Time) (BackupInfo, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return BackupInfo{}, fmt.Errorf("archive: %w", err)
	}
	defer os.Remove(tmp.Name())
	info, err := WriteBackup(st, tmp, version, now)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return BackupInfo{}, fmt.Errorf("archive: backup to %s: %w", path, err)
	}
	return info, nil
}

// ErrNotEmpty: a restore was asked into a data dir that has a database.
var ErrNotEmpty = errors.New("the data dir already has a database")

// Restore loads a backup into the data dir dir, which must not have a
// database yet (a new folder, or one holding only a config file). It
// returns the backup's header.
func Restore(dir string, r io.Reader, log *slog.Logger) (Header, error) {
	var h Header
	if entries, err := os.ReadDir(filepath.Join(dir, "db")); err == nil && len(entries) > 0 {
		return h, fmt.Errorf("archive: %s: %w; restore into an empty one (set CYAN_DATA_DIR to a new folder), or move the db folder away first", dir, ErrNotEmpty)
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return h, fmt.Errorf("archive: this is not a cyan backup (not gzip: %v); cyan backup makes them", err)
	}
	br := bufio.NewReaderSize(zr, 1<<20)
	line, err := br.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &h) != nil || h.Format != BackupFormat {
		return h, errors.New("archive: this is not a cyan backup (no cyan-backup header); cyan backup makes them")
	}
	if h.Version > BackupVersion {
		return h, fmt.Errorf("archive: this backup is version %d, written by cyan %s; this cyan reads version %d: restore it with a newer cyan", h.Version, h.Cyan, BackupVersion)
	}
	st, err := store.Open(store.Options{Dir: dir, Logger: log})
	if err != nil {
		return h, err
	}
	err = st.DB().Load(br, 256)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return h, fmt.Errorf("archive: restore into %s: %w (the backup may be cut short; the folder now holds part of it — remove its db folder before trying another)", dir, err)
	}
	return h, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
