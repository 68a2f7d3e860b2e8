package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// firstFlushKilled builds, from a real store, the data dir a kill -9
// leaves when it strikes Badger's first flush of a fresh store after the
// flush finished: the memtable's table is written and in the MANIFEST, and
// Badger was deleting its write-ahead log, which it does by cutting the
// file to zero bytes, closing it and then removing it (z.MmapFile.Delete
// in github.com/dgraph-io/ristretto/v2, called from the memtable's
// OnClose in badger/v4 v4.9.6 memtable.go once the flush dropped it). The
// store's record is the one made before the flush: it lists that log as
// holding writes. It returns the data dir, the log's name, the acknowledged
// ids and the record the live store made last (the new log recorded).
func firstFlushKilled(t *testing.T) (dir, wal string, acked []string, lastRecord []byte) {
	t.Helper()
	live := t.TempDir()
	s, err := Open(Options{Dir: live, tune: faultTune})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var (
		before []byte // the last record listing the first log
		first  uint64
	)
	for i := 0; ; i += 10 {
		if i > 20*faultMessages {
			t.Fatal("the first memtable was never flushed")
		}
		b, err := os.ReadFile(filepath.Join(live, StateFile))
		if err != nil {
			t.Fatal(err)
		}
		var st state
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		if len(st.WALs) == 1 && (first == 0 || st.WALs[0] == first) {
			first, before = st.WALs[0], b
		}
		var batch []*Message
		for j := i; j < i+10; j++ {
			batch = append(batch, &Message{Channel: fmt.Sprintf("c%d", j%3), Role: RoleUser, Text: faultText(j)})
		}
		if err := s.Append(t0.Add(time.Duration(i)*time.Second), batch...); err != nil {
			t.Fatal(err)
		}
		for _, m := range batch {
			acked = append(acked, m.ID)
		}
		if first == 0 {
			continue
		}
		// Badger removes the log once its flush is in the MANIFEST.
		if _, err := os.Stat(filepath.Join(live, "db", fmt.Sprintf("%05d.mem", first))); errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	// The files as they are now are what a kill leaves (the store is
	// idle: no compactions run, the flush is done), the lock included.
	dir = filepath.Join(t.TempDir(), "killed")
	copyDir(t, live, dir)
	lock, err := os.ReadFile(filepath.Join(live, "db", "LOCK"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "db", "LOCK"), lock, 0o600); err != nil {
		t.Fatal(err)
	}
	lastRecord, err = os.ReadFile(filepath.Join(live, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	wal = fmt.Sprintf("%05d.mem", first)
	if err := os.WriteFile(filepath.Join(dir, "db", wal), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, StateFile), before, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, wal, acked, lastRecord
}

// TestAKillDuringTheFirstFlushOpens: the zero-byte log a kill leaves as
// Badger deletes a flushed write-ahead log is recognised (its writes are
// in a table), with the record of today and one made before the record
// kept versions; a log cut to zero bytes whose writes no table holds is
// still refused.
func TestAKillDuringTheFirstFlushOpens(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a memtable")
	}
	dir, wal, acked, lastRecord := firstFlushKilled(t)
	var rec state
	if err := json.Unmarshal(lastRecord, &rec); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		refused string // the file named; "" when it opens
	}{
		{name: "the flushed log cut to zero bytes", prepare: func(*testing.T, string) {}},
		{name: "a record without versions", prepare: func(t *testing.T, dir string) {
			st, err := readState(dir)
			if err != nil || st == nil || len(st.WALVersions) == 0 {
				t.Fatalf("the record %+v, %v: no versions to drop", st, err)
			}
			st.WALVersions = nil
			if err := writeState(dir, st); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "the log being written cut to zero bytes", refused: fmt.Sprintf("%05d.mem", rec.WALs[0]), prepare: func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, StateFile), lastRecord, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(filepath.Join(dir, "db", fmt.Sprintf("%05d.mem", rec.WALs[0])), 0); err != nil {
				t.Fatal(err)
			}
		}},
	}
	if len(rec.WALs) != 1 || fmt.Sprintf("%05d.mem", rec.WALs[0]) == wal {
		t.Fatalf("the live store's last record lists %v, not the log after %s", rec.WALs, wal)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := filepath.Join(t.TempDir(), "d")
			copyDir(t, dir, d)
			c.prepare(t, d)
			s, err := Open(Options{Dir: d, tune: faultTune})
			if c.refused != "" {
				var de *DamageError
				if !errors.As(err, &de) || filepath.Base(de.File) != c.refused || !strings.Contains(err.Error(), "cyan repair NEW_DIR") {
					t.Fatalf("Open = %v, want a refusal naming %s", err, c.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("the start after the kill refuses: %v", err)
			}
			defer s.Close()
			if _, err := os.Stat(filepath.Join(d, "db", wal)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the empty %s is still there (%v)", wal, err)
			}
			missing := slices.DeleteFunc(slices.Clone(acked), func(id string) bool { _, err := s.Get(id); return err == nil })
			if len(missing) > 0 {
				t.Errorf("%d of %d acknowledged messages missing", len(missing), len(acked))
			}
		})
	}
}
