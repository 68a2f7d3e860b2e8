package store

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/internal/smallfs"
)

// TestOpenRepairsAnInterruptedStart: a kill between creating a memtable's
// or value log's file and writing its header leaves a zero-length file
// that Badger alone refuses to open; Open removes it, says so, and opens.
func TestOpenRepairsAnInterruptedStart(t *testing.T) {
	dir := t.TempDir()
	s := openDir(t, dir)
	if err := s.Append(t0, &Message{Channel: "c", Text: "kept"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "db")
	for _, name := range []string{"00099.mem", "000099.vlog"} {
		if err := os.WriteFile(filepath.Join(db, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Badger alone fails on these leftovers (so the repair is what helps).
	if bdb, err := badger.Open(badger.DefaultOptions(db).WithLogger(nil)); err == nil {
		bdb.Close()
		t.Fatal("badger opened a folder with zero-length leftovers; the repair test proves nothing")
	}
	if err := os.WriteFile(filepath.Join(db, "00099.mem"), nil, 0o600); err != nil { // badger may have touched it
		t.Fatal(err)
	}
	var logged strings.Builder
	s, err := Open(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatalf("open after an interrupted start: %v", err)
	}
	defer s.Close()
	got, err := s.Recent("c", Window{Limit: 10})
	if err != nil || len(got) != 1 || got[0].Text != "kept" {
		t.Fatalf("after repair: %v, %v", texts(got), err)
	}
	if !strings.Contains(logged.String(), "00099.mem") || !strings.Contains(logged.String(), "holds nothing to replay") {
		t.Fatalf("the repair is not logged:\n%s", logged.String())
	}
}

// fakeDisk stands in for the kernel: its free space is set by the test.
type fakeDisk struct {
	osDisk
	freeBytes atomic.Uint64
}

func (f *fakeDisk) free(string) (uint64, error) { return f.freeBytes.Load(), nil }

func TestAFullDiskRefusesWritesAndResumes(t *testing.T) {
	dir := t.TempDir()
	s := openDir(t, dir)
	defer s.Close()
	disk := &fakeDisk{}
	disk.freeBytes.Store(1 << 40)
	s.guard.sys = disk
	if err := s.Append(t0, &Message{Channel: "c", Text: "before"}); err != nil {
		t.Fatal(err)
	}
	disk.freeBytes.Store(DefaultMinFree - 1)
	err := s.Append(t0, &Message{Channel: "c", Text: "refused"})
	var se *SpaceError
	if !errors.Is(err, ErrDiskFull) || !errors.As(err, &se) || !IsUnavailable(err) {
		t.Fatalf("Append on a full disk = %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, "free") || !strings.Contains(msg, "resume") {
		t.Fatalf("the error does not say where and what to do: %s", msg)
	}
	if _, err := s.Import([]*Message{{Channel: "c", Text: "old", Time: t0}}); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("Import on a full disk = %v", err)
	}
	if err := s.PutTrace("c", []byte("{}")); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("PutTrace on a full disk = %v", err)
	}
	// Reads go on.
	got, err := s.Recent("c", Window{Limit: 10})
	if err != nil || fmt.Sprint(texts(got)) != "[before]" {
		t.Fatalf("reads on a full disk: %v, %v", texts(got), err)
	}
	// Space comes back: writes resume by themselves.
	disk.freeBytes.Store(DefaultMinFree)
	if err := s.Append(t0, &Message{Channel: "c", Text: "after"}); err != nil {
		t.Fatalf("Append once space is back: %v", err)
	}
	if got, _ := s.Recent("c", Window{Limit: 10}); fmt.Sprint(texts(got)) != "[before after]" {
		t.Fatalf("history = %v", texts(got))
	}
}

func TestARemovedDataDirRefusesWritesAndCloseReturns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := openDir(t, dir)
	if err := s.Append(t0, &Message{Channel: "c", Text: "before"}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	err := s.Append(t0, &Message{Channel: "c", Text: "into nothing"})
	if !errors.Is(err, ErrDataDirGone) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Append into a removed data dir = %v", err)
	}
	// A folder made again at the same path is not the one opened.
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(t0, &Message{Channel: "c", Text: "into another"}); !errors.Is(err, ErrDataDirGone) {
		t.Fatalf("Append into a replaced data dir = %v", err)
	}
	// It returns the removal, not its limit's timeout (the error a close
	// that waited on the database would give).
	err = s.CloseWithin(5 * time.Second)
	if !errors.Is(err, ErrDataDirGone) || !strings.Contains(err.Error(), "lost") || strings.Contains(err.Error(), "did not close within") {
		t.Fatalf("CloseWithin = %v", err)
	}
}

// quiet is a store whose Badger runs no compactions, so that the tests
// below can fill the disk to its last byte while Badger is idle, and keep
// a min_free smaller than a compaction of what they wrote needs (the
// default leaves room for that). Another program filling a disk to the
// last byte while Badger writes a table (a flush or a compaction, through
// a memory map) is the one case the store cannot answer for; the space
// reserve it gives back (on its next write, and at close) narrows it.
func quiet(o badger.Options) badger.Options { return o.WithNumCompactors(0) }

// fillStore writes ~100 KB messages until the store refuses, and returns
// the ids acknowledged. It then waits for Badger's background flush of
// the memtables filled meanwhile.
func fillStore(t *testing.T, s *Store, dir string) []string {
	t.Helper()
	raw := make([]byte, 75<<10)
	var acked []string
	var refusal error
	for range 2000 {
		_, _ = rand.Read(raw) // words that do not compress, as a year of them would not
		m := &Message{Channel: "c", Text: base64.StdEncoding.EncodeToString(raw)}
		if err := s.Append(t0, m); err != nil {
			refusal = err
			break
		}
		acked = append(acked, m.ID)
	}
	if !errors.Is(refusal, ErrDiskFull) || len(acked) == 0 {
		t.Fatalf("after %d messages: %v", len(acked), refusal)
	}
	t.Logf("%d messages acknowledged, then: %v", len(acked), refusal)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		logs, _ := filepath.Glob(filepath.Join(dir, "db", "*.mem"))
		if len(logs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("badger did not flush its memtables: %v", logs)
		}
	}
	return acked
}

func checkAcked(t *testing.T, dir string, minFree uint64, acked []string) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir, MinFree: minFree, tune: quiet})
	if err != nil {
		t.Fatalf("reopen after the disk was full: %v", err)
	}
	got, err := s.Recent("c", Window{Limit: len(acked) + 10})
	if err != nil || len(got) != len(acked) {
		t.Fatalf("after reopening: %d messages of %d acknowledged, %v", len(got), len(acked), err)
	}
	for i, m := range got {
		if m.ID != acked[i] {
			t.Fatalf("message %d is %s, want %s", i, m.ID, acked[i])
		}
	}
	return s
}

// TestASmallDiskFillsUp writes to a real 96 MB tmpfs until the store
// refuses, then another program fills the disk to the last byte: no crash
// (Badger writes through memory maps, where a full disk is SIGBUS), reads
// go on, the close says what it left in the write-ahead log, every
// acknowledged message survives, and writes resume once space is freed.
func TestASmallDiskFillsUp(t *testing.T) {
	mnt := smallfs.Mount(t, 96<<20)
	dir := filepath.Join(mnt, "data")
	const minFree = 24 << 20
	var logged strings.Builder
	s, err := Open(Options{Dir: dir, MinFree: minFree, Logger: slog.New(slog.NewTextHandler(&logged, nil)), tune: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ReserveFile)); err != nil {
		t.Fatalf("no space reserve: %v", err)
	}
	acked := fillStore(t, s, dir)
	filler := filepath.Join(mnt, "filler")
	if _, err := smallfs.Fill(filler, 0); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("x", 100<<10)
	for range 20 {
		if err := s.Append(t0, &Message{Channel: "c", Text: text}); !errors.Is(err, ErrDiskFull) {
			t.Fatalf("Append on a disk with no byte free = %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ReserveFile)); !os.IsNotExist(err) || !strings.Contains(logged.String(), "gave back the space reserve") {
		t.Fatalf("the reserve was not given back (%v):\n%s", err, logged.String())
	}
	if got, err := s.Recent("c", Window{Limit: 5}); err != nil || len(got) != 5 {
		t.Fatalf("reads on a full disk: %d, %v", len(got), err)
	}
	if _, err := smallfs.Fill(filler, 0); err != nil { // the reserve's space too
		t.Fatal(err)
	}
	err = s.CloseWithin(10 * time.Second)
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), ".mem") || !strings.Contains(err.Error(), "replayed at the next start") {
		t.Fatalf("CloseWithin on a full disk = %v", err)
	}
	// (A daemon exits here, and Badger replays the write-ahead log at its
	// next start: the e2e test and the crash harness cover that. This test
	// frees the space and closes in-process.)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := checkAcked(t, dir, minFree, acked)
	defer s2.Close()
	if err := s2.Append(t0, &Message{Channel: "c", Text: "after"}); err != nil {
		t.Fatalf("a write once space is back: %v", err)
	}
}

// TestTheReserveIsGivenBack: when another program fills the disk, the
// store's reserve is what lets Badger finish a flush and close cleanly.
func TestTheReserveIsGivenBack(t *testing.T) {
	mnt := smallfs.Mount(t, 96<<20)
	dir := filepath.Join(mnt, "data")
	const minFree = 24 << 20
	s, err := Open(Options{Dir: dir, MinFree: minFree, tune: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// Writes well short of one memtable (8 MB of arena, which a message's
	// keys and encoding take their share of), so no flush runs while they
	// are written or while the disk is then filled: a flush holds a new
	// write-ahead log beside the old one and the table it writes, and one
	// still running when the other program fills the disk writes its
	// table through a memory map into no space (SIGBUS); this test is
	// about the close. The close flushes the memtable into a table, which
	// needs the reserve's space.
	raw := make([]byte, 75<<10)
	var acked []string
	for range 40 { // about 4 MB
		_, _ = rand.Read(raw)
		m := &Message{Channel: "c", Text: base64.StdEncoding.EncodeToString(raw)}
		if err := s.Append(t0, m); err != nil {
			t.Fatalf("after %d messages: %v", len(acked), err)
		}
		acked = append(acked, m.ID)
	}
	if _, err := os.Stat(filepath.Join(dir, ReserveFile)); err != nil {
		t.Fatalf("no reserve before the disk is filled: %v", err)
	}
	if _, err := smallfs.Fill(filepath.Join(mnt, "filler"), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseWithin(10 * time.Second); err != nil {
		t.Fatalf("CloseWithin with the reserve to give back = %v", err)
	}
	// The close gave the write-ahead log's space back; the other program
	// takes it too, all but the megabyte Badger's start needs (its lock
	// file), and the store starts again on a disk below its floor.
	if _, err := smallfs.Fill(filepath.Join(mnt, "filler2"), 1<<20); err != nil {
		t.Fatal(err)
	}
	s2 := checkAcked(t, dir, minFree, acked)
	defer s2.Close()
	if err := s2.Append(t0, &Message{Channel: "c", Text: "refused"}); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("Append on the full disk after a restart = %v", err)
	}
}

// BenchmarkGuardCheck is the cost the disk guard adds to each write: a
// stat of the database folder, a read of it for new write-ahead logs and
// a statfs.
func BenchmarkGuardCheck(b *testing.B) {
	s := openDir(b, b.TempDir())
	defer s.Close()
	for b.Loop() {
		if err := s.guard.check(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendOne stores one live message per operation, durably (the
// guard included): the cost of a chat message reaching the disk.
func BenchmarkAppendOne(b *testing.B) {
	s := openDir(b, b.TempDir())
	defer s.Close()
	for b.Loop() {
		if err := s.Append(t0, &Message{Channel: "c", Role: RoleUser, Text: "hello, how was your day?"}); err != nil {
			b.Fatal(err)
		}
	}
}
