package store

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// ErrDamaged: the database folder is damaged; the store did not open it,
// so that Badger neither starts empty nor deletes what it does not
// understand. The error (a *DamageError) names the file.
var ErrDamaged = errors.New("the database is damaged")

// DamageError is an Open refused because a file of the database is
// damaged. errors.Is(err, ErrDamaged) holds.
type DamageError struct {
	Dir     string // the data dir
	File    string // the damaged file (full path)
	Problem string // what is wrong with it
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("the database in %s is damaged: %s: %s. cyan did not open it, so nothing in it was changed or removed. Either load a backup into an empty data dir (cyan restore BACKUP), or salvage what can still be read into a new data dir and see what was lost (cyan repair NEW_DIR)",
		e.Dir, e.File, e.Problem)
}

func (e *DamageError) Unwrap() error { return ErrDamaged }

// AsideDir is the folder, in the data dir, where the store moves the
// database files that Badger would delete at open: tables the MANIFEST
// does not list (a flush or a compaction killed before it recorded
// them). They are kept, never deleted; cyan repair reads them.
const AsideDir = "db.aside"

// checkDB checks a stopped database folder before Badger opens it: the
// MANIFEST is there and whole, and begins as it did at the last
// checkpoint; every table it lists is there and reads with good
// checksums; every write-ahead log replays to its end; the key registry
// is whole. Tables the MANIFEST does not list are moved to AsideDir
// (Badger would delete them). It returns a *DamageError naming the file
// when the folder cannot be opened without losing data.
func checkDB(dir string, walSize, vlogSize int64, log *slog.Logger) error {
	return checkDir(dir, walSize, vlogSize, log, false)
}

// CheckDir checks a stopped data dir's database as Open does, but only
// reads: a table that Open would move aside, or a key registry it would
// replace, is not touched. It returns a *DamageError when Open would
// refuse the folder.
func CheckDir(dir string) error {
	return checkDir(dir, 2*memTableSize, 2*valueLogFileSize, slog.New(slog.DiscardHandler), true)
}

func checkDir(dir string, walSize, vlogSize int64, log *slog.Logger, readOnly bool) error {
	dbDir := filepath.Join(dir, "db")
	tables, wals, vlogs, err := listDB(dbDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: read %s: %w", dbDir, err)
	}
	last, err := readState(dir)
	if err != nil {
		return &DamageError{Dir: dir, File: filepath.Join(dir, StateFile), Problem: err.Error()}
	}
	damaged := func(name, format string, a ...any) error {
		return &DamageError{Dir: dir, File: filepath.Join(dbDir, name), Problem: fmt.Sprintf(format, a...)}
	}

	manifestPath := filepath.Join(dbDir, badger.ManifestFilename)
	mb, err := os.ReadFile(manifestPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if last != nil || len(tables) > 0 || len(vlogs) > 0 || hasData(wals) {
			return damaged(badger.ManifestFilename, "it is missing, and without it Badger would start an empty database and delete the %d tables there", len(tables))
		}
		return nil
	case err != nil:
		return damaged(badger.ManifestFilename, "it cannot be read (%v)", err)
	}
	m, err := replayManifest(manifestPath)
	if err != nil {
		return damaged(badger.ManifestFilename, "it does not read whole (%v); Badger would drop the tables it no longer lists", err)
	}
	if last != nil && last.Manifest.Size > 0 {
		mk := last.Manifest
		if int64(len(mb)) < mk.Size || crc32.Checksum(mb[:mk.Size], crcTable) != mk.CRC {
			// Badger rewrites the MANIFEST whole now and then; a rewrite
			// lists every table there and nothing else.
			rewritten := true
			for id := range tables {
				if _, ok := m.Tables[id]; !ok {
					rewritten = false
				}
			}
			if !rewritten {
				return damaged(badger.ManifestFilename, "it is %d bytes long and no longer begins with the %d bytes it had when cyan last checked it, and it does not list every table there", len(mb), mk.Size)
			}
		}
	}

	ids := make([]uint64, 0, len(m.Tables))
	for id := range m.Tables {
		if _, ok := tables[id]; !ok {
			return damaged(table.IDToFilename(id), "the MANIFEST lists this table, but the file is missing")
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	newest, id, err := verifyTables(dbDir, ids, m.Tables, tables)
	if err != nil {
		return damaged(table.IDToFilename(id), "%v", err)
	}
	for id, size := range wals {
		name := fmt.Sprintf("%05d.mem", id) // Badger's mtFilePath
		if size == 0 {
			if last != nil && slices.Contains(last.WALs, id) && !last.flushed(id, newest, len(mb), m.Tables) {
				return damaged(name, "it is empty, but it held writes when cyan last checked it, and no table holds them")
			}
			// Left by a start killed as it made the file, or by a kill
			// as Badger deleted the log after its flush (repair.go).
			continue
		}
		w, err := scanWALFile(filepath.Join(dbDir, name))
		if err != nil {
			return damaged(name, "it cannot be read (%v)", err)
		}
		if d := w.damage(walSize); d != "" {
			return damaged(name, "%s", d)
		}
	}
	if last != nil && int64(len(mb)) == last.Manifest.Size {
		// No flush since the checkpoint: the logs it saw must still be here.
		for _, id := range last.WALs {
			if _, ok := wals[id]; !ok {
				return damaged(fmt.Sprintf("%05d.mem", id), "this write-ahead log is missing, and no flush has stored its writes in a table since cyan last checked")
			}
		}
	}
	vlogEnds := map[uint64]int64{} // where each value log's values read to
	for id, size := range vlogs {
		name := fmt.Sprintf("%06d.vlog", id) // Badger's vlog.fpath
		if size == 0 {
			if last != nil && slices.Contains(last.VLogIDs, id) {
				return damaged(name, "it is empty (zero bytes), but it held values when cyan last checked")
			}
			vlogEnds[id] = 0
			continue // left by a start killed as it made the file (repair.go)
		}
		w, err := scanVlogFile(filepath.Join(dbDir, name))
		if err != nil {
			return damaged(name, "it cannot be read (%v)", err)
		}
		if d := w.damage(vlogSize); d != "" {
			return damaged(name, "%s", d)
		}
		if was, ok := last.vlog(id); ok && w.end < was {
			return damaged(name, "its values end at byte %d, but they went to byte %d when cyan last checked", w.end, was)
		}
		vlogEnds[id] = w.end
	}
	if last == nil && len(m.Tables) > 0 {
		// No record (the first start of a data dir made before cyan
		// kept one, or the record was removed): what it would have
		// caught is looked for in the files themselves.
		if err := checkUnrecorded(dir, dbDir, wals, vlogEnds, m.Tables); err != nil {
			return err
		}
	}
	if last != nil {
		for id := range last.VLogs {
			if _, ok := vlogs[id]; !ok {
				return damaged(fmt.Sprintf("%06d.vlog", id), "this value log is missing; it held values (long messages) when cyan last checked")
			}
		}
		for _, id := range last.VLogIDs {
			if _, ok := vlogs[id]; !ok {
				return damaged(fmt.Sprintf("%06d.vlog", id), "this value log is missing; it held values when cyan last checked, and Badger removes none that does")
			}
		}
	}
	if err := checkKeyRegistry(dbDir); err != nil {
		for id, tm := range m.Tables {
			if tm.KeyID != 0 {
				return damaged(KeyRegistryFile, "%v, and the table %s was encrypted with a key it held", err, table.IDToFilename(id))
			}
		}
		// cyan does not encrypt: the registry holds no key, and Badger
		// writes a new one. Keep the damaged one.
		if readOnly {
			return nil
		}
		to, merr := moveAside(dir, dbDir, KeyRegistryFile)
		if merr != nil {
			return merr
		}
		log.Warn("the key registry was damaged; it holds no key (cyan does not encrypt), so it was moved aside and Badger writes a new one", "problem", err.Error(), "file", to)
	}

	// Badger deletes the tables its MANIFEST does not list; keep them.
	for id := range tables {
		if readOnly {
			break
		}
		if _, ok := m.Tables[id]; ok {
			continue
		}
		name := table.IDToFilename(id)
		// The MANIFEST begins as it did at the checkpoint (checked
		// above), so a table it stopped listing since was deleted by a
		// compaction whose file removal was cut short, or is the output
		// of a flush or compaction killed before it was recorded.
		to, err := moveAside(dir, dbDir, name)
		if err != nil {
			return err
		}
		log.Warn("moved a table the MANIFEST does not list out of the database, where Badger would delete it; it is most likely what a flush or compaction killed midway left (its writes are elsewhere), and cyan repair reads it", "file", to)
	}
	return nil
}

// moveAside moves a file of the database folder into AsideDir, under a
// name no earlier move took.
func moveAside(dir, dbDir, name string) (string, error) {
	aside := filepath.Join(dir, AsideDir)
	if err := os.MkdirAll(aside, 0o700); err != nil {
		return "", fmt.Errorf("store: %w", err)
	}
	to := filepath.Join(aside, name)
	for i := 1; ; i++ {
		if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
			break
		}
		to = filepath.Join(aside, fmt.Sprintf("%s.%d", name, i))
	}
	if err := os.Rename(filepath.Join(dbDir, name), to); err != nil {
		return "", fmt.Errorf("store: move %s aside: %w (move it out of %s by hand)", name, err, dbDir)
	}
	return to, nil
}

func hasData(wals map[uint64]int64) bool {
	for _, size := range wals {
		if size > 0 {
			return true
		}
	}
	return false
}

// verifyTables verifies the tables ids (in that order) on as many cores as
// there are, up to four: reading every block of a million messages'
// tables takes seconds of one core, most of a restart. It returns the
// newest commit version the tables hold, or the first damaged table in
// that order; it stops giving out tables once one is found.
func verifyTables(dbDir string, ids []uint64, tms map[uint64]badger.TableManifest, sizes map[uint64]int64) (newest, damaged uint64, err error) {
	errs := make([]error, len(ids))
	versions := make([]uint64, len(ids))
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), 4, max(len(ids), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(ids) {
					return
				}
				id := ids[i]
				if versions[i], errs[i] = verifyTable(filepath.Join(dbDir, table.IDToFilename(id)), tms[id], sizes[id]); errs[i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return 0, ids[i], err
		}
		newest = max(newest, versions[i])
	}
	return newest, 0, nil
}

// verifyTable opens a table as Badger does and reads every block with its
// checksum; it returns the newest commit version the table holds. A panic
// inside Badger's table code (a cut or zeroed file can make it index past
// the end) is an error.
func verifyTable(path string, tm badger.TableManifest, size int64) (version uint64, err error) {
	if size == 0 {
		return 0, errors.New("the table is empty (zero bytes): it was cut or zeroed")
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil && !errors.Is(err, z.NewFile) {
		return 0, fmt.Errorf("cannot open the table (%v)", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the table cannot be read: it was cut or overwritten (Badger's table reader failed on it: %s)", oneLine(fmt.Sprint(r), 80))
		}
		_ = mf.Close(-1)
	}()
	t, err := table.OpenTable(mf, table.Options{
		ChkMode:     options.OnTableRead,
		Compression: tm.Compression,
		BlockSize:   4 << 10,
		ReadOnly:    true,
	})
	if err != nil {
		return 0, fmt.Errorf("the table fails its checks (%v): its contents were changed or cut", err)
	}
	// t is closed with mf; never DecrRef, which deletes the file.
	return t.MaxVersion(), nil
}

// KeyRegistryFile is Badger's key registry. cyan does not encrypt, so it
// holds no key; Badger still refuses to open without a sound one.
const KeyRegistryFile = "KEYREGISTRY"

// checkKeyRegistry checks the key registry: Badger's layout (key_registry.go
// in github.com/dgraph-io/badger/v4 v4.9.6) is a 16-byte IV, the
// sanity text "Hello Badger" (not encrypted without a key), then
// length+CRC framed data keys, none for cyan. A missing registry is
// made anew by Badger; that loses nothing when no table was encrypted.
func checkKeyRegistry(dbDir string) error {
	f, err := os.Open(filepath.Join(dbDir, KeyRegistryFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("it cannot be read (%v)", err)
	}
	defer f.Close()
	head := make([]byte, 16+len(sanityText))
	if _, err := io.ReadFull(f, head); err != nil {
		return fmt.Errorf("it is cut short (%v)", err)
	}
	if string(head[16:]) != sanityText {
		return errors.New("its sanity text is not \"Hello Badger\": it was overwritten or zeroed")
	}
	rest, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("it cannot be read (%v)", err)
	}
	if len(rest) != 0 {
		return fmt.Errorf("it holds %d bytes of keys after its header, but cyan does not encrypt: it was overwritten", len(rest))
	}
	return nil
}

const sanityText = "Hello Badger"

// oneLine folds a panic's text (Badger's span several lines) into one
// line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimPrefix(s, "== Recovering from initIndex crash == ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
