package store

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/table"
)

// TestMinFreeFloor: the floor is what Badger may write at once with the
// store's options, rounded up to a megabyte, and the default keeps more.
func TestMinFreeFloor(t *testing.T) {
	s := openDir(t, t.TempDir())
	defer s.Close()
	need := minFreeFloor(s.db.Opts())
	if MinFreeFloor < need || MinFreeFloor-need >= 1<<20 {
		t.Fatalf("MinFreeFloor = %d MB, but Badger may write %d bytes (%.1f MB) at once: set it to that, rounded up to a MB", MinFreeFloor>>20, need, float64(need)/(1<<20))
	}
	if DefaultMinFree < MinFreeFloor {
		t.Fatalf("the default min free %d is below the floor %d", DefaultMinFree, MinFreeFloor)
	}
}

// recordedMessages rewrites the store's record to say it held n
// messages.
func recordedMessages(t *testing.T, dir string, n uint64) {
	t.Helper()
	st, err := readState(dir)
	if err != nil || st == nil {
		t.Fatalf("the record after a clean close: %v, %v", st, err)
	}
	st.Messages = n
	if err := writeState(dir, st); err != nil {
		t.Fatal(err)
	}
}

// TestFewerMessagesThanRecordedIsLoud: an open that finds fewer messages
// than the record of the last close says so in the log and through
// Shortfall, and the record keeps the note for cyan doctor.
func TestFewerMessagesThanRecordedIsLoud(t *testing.T) {
	dir := t.TempDir()
	s := openDir(t, dir)
	for range 5 {
		if err := s.Append(t0, &Message{Channel: "c", Text: "kept"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st, _ := readState(dir); st == nil || st.Messages != 5 || !st.Clean {
		t.Fatalf("the record of a clean close: %+v", st)
	}

	// A healthy start is quiet.
	var logged strings.Builder
	s, err := Open(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if s.Shortfall() != nil || strings.Contains(logged.String(), "fewer messages") {
		t.Fatalf("a healthy start reported a shortfall: %v\n%s", s.Shortfall(), logged.String())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	recordedMessages(t, dir, 8)
	logged.Reset()
	s, err = Open(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	short := s.Shortfall()
	if short == nil || short.Recorded != 8 || short.Found != 5 {
		t.Fatalf("Shortfall = %+v, want 5 found of 8 recorded", short)
	}
	if !strings.Contains(logged.String(), "level=ERROR") || !strings.Contains(logged.String(), "3 are missing") || !strings.Contains(logged.String(), "cyan repair") {
		t.Fatalf("the shortfall is not logged as an error that says what to do:\n%s", logged.String())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	note, err := LastRecord(dir)
	if err != nil || note == nil || note.Short == nil || note.Short.Found != 5 {
		t.Fatalf("the record lost the shortfall: %+v, %v", note, err)
	}
}

// TestUnlistedTableIsMovedAside: a table the MANIFEST does not list (what
// a flush killed before it recorded the table leaves) is moved out of
// Badger's reach, not deleted, and the store opens with every message.
func TestUnlistedTableIsMovedAside(t *testing.T) {
	dir := t.TempDir()
	// 300 messages, three of them in the value log: a clean stop flushes
	// them into a table, the one this test copies (3,000 took seconds
	// under -race and showed nothing more).
	acked := stoppedDir(t, dir, 300)
	db := filepath.Join(dir, "db")
	tables, _, _, err := listDB(db)
	if err != nil || len(tables) == 0 {
		t.Fatalf("tables: %v %v", tables, err)
	}
	var some uint64
	for id := range tables {
		some = id
	}
	b, err := os.ReadFile(filepath.Join(db, table.IDToFilename(some)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(db, "000999.sst"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	s, err := Open(Options{Dir: dir, tune: faultTune, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(filepath.Join(dir, AsideDir, "000999.sst")); err != nil {
		t.Fatalf("the unlisted table was not kept aside: %v", err)
	}
	if !strings.Contains(logged.String(), "000999.sst") {
		t.Fatalf("the move is not logged:\n%s", logged.String())
	}
	for _, id := range acked {
		if _, err := s.Get(id); err != nil {
			t.Fatalf("message %s: %v", id, err)
		}
	}
}

// BenchmarkCheckBeforeOpen measures the check every start makes before
// Badger opens (every table read with its checksums, every log scanned),
// on a database of 20,000 messages of ~600 bytes after a clean stop.
func BenchmarkCheckBeforeOpen(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 20000; i += 100 {
		var batch []*Message
		for j := i; j < i+100; j++ {
			batch = append(batch, &Message{Channel: "c", Role: RoleUser, Text: faultText(j % 99)})
		}
		if err := s.Append(t0, batch...); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	tables, _, _, _ := listDB(filepath.Join(dir, "db"))
	var size int64
	for _, n := range tables {
		size += n
	}
	for b.Loop() {
		if err := checkDB(dir, 2*memTableSize, 2*valueLogFileSize, slog.New(slog.DiscardHandler)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size)/(1<<20), "table-MB")
}

// TestAnUnfinishedTransactionIsNotRecorded: a checkpoint that reads a
// write-ahead log holding only the start of a transaction (the journal or
// the router writing beside the store's lock) does not record it as
// holding writes. Badger removes such a log as it opens (nothing in it was
// finished); a start killed after that but before its own checkpoint must
// not find the data dir damaged. The crash harness met this once under
// load: "00003.mem: this write-ahead log is missing".
func TestAnUnfinishedTransactionIsNotRecorded(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(t0, &Message{Channel: "c", Text: "kept"}); err != nil {
		t.Fatal(err)
	}
	// The start of the append's transaction: its first entry, no finish.
	_, wals, _, err := listDB(db)
	if err != nil || len(wals) != 1 {
		t.Fatalf("write-ahead logs %v, %v", wals, err)
	}
	var id uint64
	for id = range wals {
	}
	b, err := os.ReadFile(filepath.Join(db, fmt.Sprintf("%05d.mem", id)))
	if err != nil {
		t.Fatal(err)
	}
	e, n := walEntry(b, walHeaderSize)
	if n == 0 || e.meta&walBitTxn == 0 || e.meta&walBitFinTxn != 0 {
		t.Fatalf("the first entry is not the start of a transaction: %+v", e)
	}
	cut := append(slices.Clone(b[:walHeaderSize+n]), make([]byte, len(b)-walHeaderSize-n)...)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A new log holding that start, and a checkpoint reading it.
	_, wals, _, _ = listDB(db)
	next := id + 1
	for w := range wals {
		next = max(next, w+1)
	}
	cutPath := filepath.Join(db, fmt.Sprintf("%05d.mem", next))
	if err := os.WriteFile(cutPath, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := snapshot(db, 2*valueLogFileSize)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(st.WALs, next) {
		t.Errorf("the checkpoint records %05d.mem, which holds no finished write, as holding writes", next)
	}
	if err := writeState(dir, st); err != nil {
		t.Fatal(err)
	}
	// Badger opens (and closes with nothing to flush): it removes the log.
	bdb, err := badger.Open(badger.DefaultOptions(db).WithMemTableSize(memTableSize).WithValueLogFileSize(valueLogFileSize).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cutPath); !os.IsNotExist(err) {
		t.Fatalf("Badger kept the log with no finished write (%v): the test no longer shows the case", err)
	}
	if err := checkDir(dir, 2*memTableSize, 2*valueLogFileSize, slog.New(slog.DiscardHandler), true); err != nil {
		t.Fatalf("the next start refuses: %v", err)
	}
	s, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Recent("c", Window{Limit: 5}); err != nil || len(got) != 1 || got[0].Text != "kept" {
		t.Fatalf("after the start: %v %v", got, err)
	}
}

// holdsFinishedWrite reads a log in growing steps: a finished transaction
// longer than the first step is found, and one cut before its end, or
// whose end is missing, is not.
func TestHoldsFinishedWriteReadsInSteps(t *testing.T) {
	dir := t.TempDir()
	s := openDir(t, dir)
	defer s.Close()
	var msgs []*Message
	for i := range 600 { // one transaction of ~500 KB, over the first step (3,000 shorter messages cost three times the CPU)
		msgs = append(msgs, &Message{Channel: "c", User: "u", Text: strings.Repeat("long enough ", 60), Time: t0.Add(time.Duration(i) * time.Second), ExternalID: fmt.Sprint(i)})
	}
	if _, err := s.Import(msgs); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "db")
	_, wals, _, err := listDB(db)
	if err != nil {
		t.Fatal(err)
	}
	var newest uint64
	for id := range wals {
		newest = max(newest, id)
	}
	b, err := os.ReadFile(filepath.Join(db, fmt.Sprintf("%05d.mem", newest)))
	if err != nil {
		t.Fatal(err)
	}
	// The import's first transaction: its first entry, its finishing
	// entry and its end.
	start, fin, end := 0, 0, 0
	for off, at := walHeaderSize, walHeaderSize; end == 0; {
		e, n := walEntry(b, off)
		if n == 0 {
			t.Fatal("no transaction longer than 256 KiB in the log")
		}
		if e.meta&walBitFinTxn != 0 {
			if off+n-at > 256<<10 {
				start, fin, end = at, off, off+n
			}
			at = off + n
		}
		off += n
	}
	logOf := func(body []byte, size int) string {
		l := append(slices.Clone(b[:walHeaderSize]), body...)
		l = append(l, make([]byte, max(size-len(l), 0))...)
		p := filepath.Join(t.TempDir(), "00001.mem")
		if err := os.WriteFile(p, l, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		path string
		want bool
	}{
		{"finished", logOf(b[start:end], 4<<20), true},
		{"finished, the file no longer than it", logOf(b[start:end], 0), true},
		{"without its finishing entry", logOf(b[start:fin], 4<<20), false},
		{"cut in the middle", logOf(b[start:(start+end)/2], 0), false},
	} {
		if got := holdsFinishedWrite(c.path); got != c.want {
			t.Errorf("%s: holdsFinishedWrite = %v, want %v", c.name, got, c.want)
		}
	}
}
