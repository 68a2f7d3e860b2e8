package store

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWithoutARecordTheChecksRun: a data dir a kill -9 left, whose record
// (db.state) is gone — the first start after an upgrade from a cyan that
// kept none — opens when whole, and is refused, naming the file and the
// way out, when its write-ahead log or a value log is missing or a table
// is damaged: before, the first two opened with messages silently lost.
func TestWithoutARecordTheChecksRun(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a memtable")
	}
	live := t.TempDir()
	s, err := Open(Options{Dir: live, tune: faultTune})
	if err != nil {
		t.Fatal(err)
	}
	var acked []string
	writeFault(t, s, 2000, func(ids []string) { acked = append(acked, ids...) })
	killed := filepath.Join(t.TempDir(), "killed")
	copyDir(t, live, killed) // as a kill leaves it: Badger's LOCK, the logs open
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(killed, StateFile)); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(killed, "db")
	tables, wals, vlogs, err := listDB(db)
	if err != nil || len(tables) == 0 || len(wals) == 0 || len(vlogs) == 0 {
		t.Fatalf("the killed store has tables %v, logs %v, value logs %v (%v)", tables, wals, vlogs, err)
	}
	removeAll := func(ext string) func(string) error {
		return func(d string) error {
			files, _ := filepath.Glob(filepath.Join(d, "db", "*"+ext))
			for _, f := range files {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
			return nil
		}
	}
	cases := []struct {
		name    string
		damage  func(dir string) error
		refused string // a part of the file named; "" when it opens
	}{
		{name: "whole", damage: func(string) error { return nil }},
		{name: "the write-ahead log missing", damage: removeAll(".mem"), refused: ".mem"},
		{name: "the value log missing", damage: removeAll(".vlog"), refused: ".vlog"},
		{name: "a table cut to half", damage: func(d string) error { return truncateHalf(fileOf(".sst")(filepath.Join(d, "db"))) }, refused: ".sst"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "d")
			copyDir(t, killed, dir)
			if err := c.damage(dir); err != nil {
				t.Fatal(err)
			}
			s, err := Open(Options{Dir: dir, tune: faultTune})
			if c.refused != "" {
				var de *DamageError
				if !errors.As(err, &de) || !strings.Contains(de.File, c.refused) || !strings.Contains(err.Error(), "cyan repair NEW_DIR") {
					t.Fatalf("Open = %v, want a refusal naming the %s", err, c.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("the whole data dir without a record refuses: %v", err)
			}
			defer s.Close()
			for _, id := range acked {
				if _, err := s.Get(id); err != nil {
					t.Fatalf("message %s: %v", id, err)
				}
			}
		})
	}
}

// FuzzWALPointers: whatever a write-ahead or value log holds, its scan,
// the versions of its entries and the value pointers read from it never
// panic, and every entry read lies inside the log.
func FuzzWALPointers(f *testing.F) {
	entry := func(meta byte, key, val []byte) []byte {
		b := []byte{meta, 0}
		b = binary.AppendUvarint(b, uint64(len(key)))
		b = binary.AppendUvarint(b, uint64(len(val)))
		b = binary.AppendUvarint(b, 0)
		b = append(append(b, key...), val...)
		return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	}
	head := append(make([]byte, 8), []byte("twelve bytes")...)
	key := append([]byte("msg\x00abcdefgh"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0)
	ptr := binary.NativeEndian.AppendUint32(binary.NativeEndian.AppendUint32(binary.NativeEndian.AppendUint32(nil, 1), 100), 20)
	f.Add(slices.Concat(head, entry(walBitTxn|walBitValuePointer, key, ptr), entry(walBitFinTxn, append([]byte(txnKey), key[len(key)-8:]...), []byte("15"))))
	f.Add(slices.Concat(head, entry(0, key, []byte("short value"))))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, vlog := range []bool{false, true} {
			w := scanLog(b, vlog)
			if w.end > int64(len(b)) || w.beyond > int64(len(b)) {
				t.Fatalf("scan %+v past the log's %d bytes", w, len(b))
			}
			_ = w.damage(int64(len(b)))
		}
		for off := walHeaderSize; off < len(b); {
			e, n := walEntry(b, off)
			if n == 0 {
				break
			}
			if e.key < off || e.key+int(e.klen)+int(e.vlen)+4 != off+n || off+n > len(b) {
				t.Fatalf("entry at %d: %+v, %d bytes, outside the log", off, e, n)
			}
			_ = e.version(b)
			off += n
		}
		_ = walPointers(b, func([12]byte) error { return nil })
	})
}
