package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// appendClose writes n messages and closes the store: the close flushes
// the memtable into a level-0 table.
func appendClose(t *testing.T, s *Store, n int) {
	t.Helper()
	for i := range n {
		if err := s.Append(t0, &Message{Channel: "c", Role: RoleUser, Text: fmt.Sprint("message ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDiskSizeWithMetricsOff: Badger's metrics are off, so its own Size
// reads nothing; DiskSize counts the tables and value logs from their
// files, and answers from its count for a second.
func TestDiskSizeWithMetricsOff(t *testing.T) {
	dir := t.TempDir()
	appendClose(t, openDir(t, dir), 50)
	now := t0
	s, err := Open(Options{Dir: dir, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if lsm, vlog := s.DB().Size(); lsm != 0 || vlog != 0 {
		t.Errorf("Badger's Size = %d, %d; want 0, 0 with its metrics off", lsm, vlog)
	}
	lsm, vlog := s.DiskSize()
	if lsm <= 0 || vlog <= 0 {
		t.Fatalf("DiskSize = %d, %d; want both above 0", lsm, vlog)
	}
	f := s.scanDB(true)
	if f.lsm != lsm || f.vlog != vlog || f.tables != 1 {
		t.Errorf("DiskSize = %d, %d; the folder holds %+v, want one table", lsm, vlog, f)
	}

	s.size.lsm = -1 // marks an answer from the count
	if l, _ := s.DiskSize(); l != -1 {
		t.Errorf("within the second: lsm %d, want the count's", l)
	}
	now = now.Add(sizeFresh)
	if l, _ := s.DiskSize(); l != lsm {
		t.Errorf("a second later: lsm %d, want %d counted anew", l, lsm)
	}

	mem, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if lsm, vlog := mem.DiskSize(); lsm != 0 || vlog != 0 {
		t.Errorf("in memory: DiskSize = %d, %d, want 0, 0", lsm, vlog)
	}
	_ = mem.TreeMark()
}

// TestTreeMarkMovesWithTables: the mark holds while the tree does not
// change and moves when a table is written and when a compaction moves
// tables between levels. Badger's own compactors are off; DB.Flatten
// compacts level 0 into the base level while the test waits.
func TestTreeMarkMovesWithTables(t *testing.T) {
	dir := t.TempDir()
	tune := func(o badger.Options) badger.Options {
		return o.WithNumCompactors(0).WithNumLevelZeroTables(1).WithNumLevelZeroTablesStall(100)
	}
	open := func() *Store {
		s, err := Open(Options{Dir: dir, tune: tune})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	empty := s.TreeMark()
	appendClose(t, s, 20)
	s = open()
	one := s.TreeMark()
	if one == empty {
		t.Fatal("a table written left the mark as it was")
	}
	if again := s.TreeMark(); again != one {
		t.Fatal("the mark moved with nothing written")
	}
	appendClose(t, s, 20)
	s = open()
	defer s.Close()
	two := s.TreeMark()
	if two == one {
		t.Fatal("a second table left the mark as it was")
	}
	if err := s.DB().Flatten(1); err != nil {
		t.Fatal(err)
	}
	if s.DB().Levels()[0].NumTables != 0 {
		t.Fatalf("Flatten left level 0 with %d tables", s.DB().Levels()[0].NumTables)
	}
	if s.TreeMark() == two {
		t.Fatal("a compaction left the mark as it was")
	}
}
