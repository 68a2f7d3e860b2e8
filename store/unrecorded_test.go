package store

import (
	"errors"
	"os"
	"path/filepath"
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
