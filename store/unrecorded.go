package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// badgerLockFile is the file Badger holds while the database is open and
// removes as it closes (directoryLockGuard in dir_unix.go of
// github.com/dgraph-io/badger/v4 v4.9.6): still there, the last run was
// killed.
const badgerLockFile = "LOCK"

// walBitValuePointer marks an entry whose value is a pointer into a value
// log (bitValuePointer in value.go): its file id, the value's length and
// its offset, three u32 in the machine's order (valuePointer.Encode in
// structs.go).
const walBitValuePointer = 1 << 1

// checkUnrecorded checks a database that has no record (StateFile) for
// the damage the record would show, from the files alone:
//
//   - a write-ahead log is missing: the last run was killed (Badger's LOCK
//     is still there) after it made a value log — Badger's Open makes the
//     memtable's log first — and no log is left, which an open database
//     always has (a kill in the last moments of a close, after its final
//     flush removed the log, looks the same: a refusal then loses
//     nothing, as cyan repair keeps every message);
//   - a value log is missing, or cut before a value: a table or a
//     write-ahead log points at a value it no longer holds.
//
// It reads every entry of every table, seconds for a million messages,
// once: the open that passes records what it found.
func checkUnrecorded(dir, dbDir string, wals map[uint64]int64, vlogEnds map[uint64]int64, tables map[uint64]badger.TableManifest) error {
	damaged := func(name, format string, a ...any) error {
		return &DamageError{Dir: dir, File: filepath.Join(dbDir, name), Problem: fmt.Sprintf(format, a...)}
	}
	if _, err := os.Stat(filepath.Join(dbDir, badgerLockFile)); err == nil && len(wals) == 0 && len(vlogEnds) > 0 {
		return &DamageError{Dir: dir, File: filepath.Join(dbDir, "*.mem"), Problem: "the write-ahead log (*.mem) is missing: the last run was killed (Badger's LOCK is still there), and an open database always has one; the writes since the last flush were in it. (cyan has no record of this data dir, db.state, to tell more)"}
	}
	check := func(from string, p [12]byte) error {
		fid := binary.NativeEndian.Uint32(p[0:])
		n := binary.NativeEndian.Uint32(p[4:])
		off := binary.NativeEndian.Uint32(p[8:])
		name := fmt.Sprintf("%06d.vlog", fid)
		end, ok := vlogEnds[uint64(fid)]
		switch {
		case !ok:
			return damaged(name, "this value log is missing, but %s points at a value in it (a long message)", from)
		case int64(off)+int64(n) > end:
			return damaged(name, "%s points at a value at bytes %d–%d of it, but its values read only to byte %d: it was cut or damaged", from, off, int64(off)+int64(n), end)
		}
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(wals)) {
		name := fmt.Sprintf("%05d.mem", id)
		b, err := os.ReadFile(filepath.Join(dbDir, name))
		if err != nil {
			return damaged(name, "it cannot be read (%v)", err)
		}
		if err := walPointers(b, func(p [12]byte) error { return check(name, p) }); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(tables)) {
		name := table.IDToFilename(id)
		if err := tablePointers(filepath.Join(dbDir, name), tables[id], func(p [12]byte) error { return check("the table "+name, p) }); err != nil {
			var de *DamageError
			if errors.As(err, &de) {
				return err
			}
			return damaged(name, "%v", err)
		}
	}
	return nil
}

// walPointers calls fn with every value pointer in the entries of a
// write-ahead log that read, up to the first that does not.
func walPointers(b []byte, fn func([12]byte) error) error {
	for off := walHeaderSize; off < len(b); {
		e, n := walEntry(b, off)
		if n == 0 {
			break
		}
		if v := e.key + int(e.klen); e.meta&walBitValuePointer != 0 && e.vlen >= 12 {
			if err := fn([12]byte(b[v : v+12])); err != nil {
				return err
			}
		}
		off += n
	}
	return nil
}

// tablePointers calls fn with every value pointer a table holds.
func tablePointers(path string, tm badger.TableManifest, fn func([12]byte) error) (err error) {
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil && !errors.Is(err, z.NewFile) {
		return fmt.Errorf("cannot open the table (%v)", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the table cannot be read (%s)", oneLine(fmt.Sprint(r), 80))
		}
		_ = mf.Close(-1)
	}()
	t, err := table.OpenTable(mf, table.Options{ChkMode: options.OnBlockRead, Compression: tm.Compression, BlockSize: 4 << 10, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("the table fails its checks (%v)", err)
	}
	it := t.NewIterator(0)
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		if v := it.Value(); v.Meta&walBitValuePointer != 0 && len(v.Value) >= 12 {
			if err := fn([12]byte(v.Value)); err != nil {
				return err
			}
		}
	}
	return nil
}
