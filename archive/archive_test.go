package archive

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/internal/clocktest"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/store"
)

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

func openDir(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// fill gives a store something of every kind an export carries: channels
// with live, imported and tool messages, a compressed form, and records of
// every space — text keys, binary keys, JSON values and not-JSON values.
func fill(t *testing.T, st *store.Store) {
	t.Helper()
	in := &store.Message{Channel: "home", Role: store.RoleUser, User: "ann", Text: "remember <tea> & cake", ExternalID: "k1"}
	if err := st.Append(t0, in); err != nil {
		t.Fatal(err)
	}
	out := &store.Message{Channel: "home", Role: store.RoleAssistant, User: "青蓝", Text: "记住了", ReplyTo: in.ID,
		ToolCalls: []store.ToolCall{{ID: "c1", Name: "remember", Arguments: `{"text":"tea"}`}}}
	tool := &store.Message{Channel: "home", Role: store.RoleTool, User: "remember", Text: "kept", ReplyTo: in.ID, ToolCallID: "c1", ToolName: "remember"}
	if err := st.Append(t0.Add(time.Second), out, tool); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Import([]*store.Message{{Channel: "qq:group:1", User: "bob", Text: "old times", Time: t0.Add(-48 * time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutCompressed(out.ID, store.Compressed{Text: "remembered", Time: t0, TraceID: "tr1"}); err != nil {
		t.Fatal(err)
	}
	err := st.DB().Update(func(txn *badger.Txn) error {
		for i, sp := range spaces {
			var start [8]byte
			binary.BigEndian.PutUint64(start[:], uint64(i)<<60|0xff)
			sets := map[string][]byte{
				"i\x00item" + fmt.Sprint(i):       []byte(`{"text":"an item","r":0.9,"s":8}`),
				"home\x00\x01" + string(start[:]): []byte(`{"title":"a day"}`),
				"counter":                         {0, 0, 0, 7},
				"empty":                           nil,
			}
			for k, v := range sets {
				if err := txn.Set([]byte(sp.prefix+k), v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func export(t *testing.T, st *store.Store) (string, ExportInfo) {
	t.Helper()
	var b bytes.Buffer
	info, err := Export(st, &b, "test", t0)
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), info
}

func TestExportImportRoundTrip(t *testing.T) {
	src := openDir(t, t.TempDir())
	defer src.Close()
	fill(t, src)
	first, info := export(t, src)
	if info.Channels != 2 || info.Messages != 4 || info.Compressed != 1 || info.Records != 4*len(spaces) {
		t.Fatalf("export: %+v", info)
	}
	dst := openDir(t, t.TempDir())
	defer dst.Close()
	in, err := Import(dst, strings.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if in.Messages != 4 || in.Channels != 2 || in.Compressed != 1 || in.Records != 4*len(spaces) || in.Kept != 0 {
		t.Fatalf("import: %+v", in)
	}
	second, _ := export(t, dst)
	if first != second {
		t.Fatalf("the round trip changed the export:\n%s\n---\n%s", first, second)
	}
	// The restored store works as the first did: history, the external
	// id index (importing the old line again adds nothing), new ids after
	// the restored ones.
	got, _ := dst.Recent("home", store.Window{Limit: 10})
	if len(got) != 3 || got[0].Text != "remember <tea> & cake" || got[1].ToolCalls[0].Name != "remember" {
		t.Fatalf("restored history: %+v", got)
	}
	if id, err := dst.LookupExternal("home", "k1"); err != nil || id != got[0].ID {
		t.Fatalf("external id after restore: %q %v", id, err)
	}
	if added, err := dst.Import([]*store.Message{{Channel: "qq:group:1", User: "bob", Text: "old times", Time: t0.Add(-48 * time.Hour)}}); err != nil || len(added) != 0 {
		t.Fatalf("re-importing restored history added %d (%v)", len(added), err)
	}
	next := &store.Message{Channel: "home", Role: store.RoleUser, Text: "after"}
	if err := dst.Append(t0.Add(-time.Hour), next); err != nil || next.ID <= got[2].ID {
		t.Fatalf("a new message after the restore sorts before the restored ones: %s ≤ %s (%v)", next.ID, got[2].ID, err)
	}
	// Into a store that holds the same: everything is kept, nothing added.
	again, err := Import(dst, strings.NewReader(first))
	if err != nil || again.Messages != 0 || again.Records != 0 || again.Compressed != 0 || again.Kept != 4+1+4*len(spaces) {
		t.Fatalf("import again: %+v %v", again, err)
	}
	// Every line is JSON a reader can take apart.
	for i, l := range strings.Split(strings.TrimSpace(first), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v", i+1, err)
		}
	}
}

func TestImportRefusesWhatItCannotRead(t *testing.T) {
	st := openDir(t, t.TempDir())
	defer st.Close()
	for _, c := range []struct{ in, want string }{
		{"", "not a cyan export"},
		{`{"time":"2024-01-01T00:00:00Z","text":"a history line"}` + "\n", "not a cyan export"},
		{`{"format":"cyan-export","version":2,"cyan":"9.0"}` + "\n", "version 2, written by cyan 9.0"},
		{`{"format":"cyan-export","version":1}` + "\n" + `{"type":"spaceship"}` + "\n", `line 2: "spaceship" is not a kind of line`},
		{`{"format":"cyan-export","version":1}` + "\n" + `{"type":"record","space":"nope","key":"k","value":1}` + "\n", `"nope" is not a kind of record`},
		{`{"format":"cyan-export","version":1}` + "\n" + `{"type":"message","message":{"id":"x","channel":"c"}}` + "\n", `id "x"`},
		{`{"format":"cyan-export","version":1}` + "\n{oops\n", "line 2"},
	} {
		if _, err := Import(st, strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60q: %v, want %q", c.in, err, c.want)
		}
	}
}

// TestEveryKeySpaceIsDecided: each key space registered in store/keys.go
// is exported, or left out with a reason, or is the store's own.
func TestEveryKeySpaceIsDecided(t *testing.T) {
	src, err := os.ReadFile("../store/keys.go")
	if err != nil {
		t.Fatal(err)
	}
	decided := map[string]bool{}
	for _, sp := range spaces {
		decided[sp.prefix] = true
	}
	for p := range notExported {
		decided[p] = true
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*(Prefix\w+)\s*=\s*"([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		prefix := strings.ReplaceAll(m[2], `\x00`, "\x00")
		if !decided[prefix] {
			t.Errorf("%s (%q) is neither exported (archive/spaces.go) nor left out with a reason", m[1], m[2])
		}
	}
}

func TestBackupRestore(t *testing.T) {
	src := openDir(t, t.TempDir())
	fill(t, src)
	want, _ := export(t, src)
	path := filepath.Join(t.TempDir(), "cyan.backup")
	if _, err := BackupFile(src, path, "test", t0); err != nil {
		t.Fatal(err)
	}
	src.Close()
	dir := t.TempDir()
	f, _ := os.Open(path)
	defer f.Close()
	if h, err := Restore(dir, f, nil); err != nil || h.Format != BackupFormat || !h.Created.Equal(t0) {
		t.Fatalf("restore: %+v %v", h, err)
	}
	dst := openDir(t, dir)
	got, _ := export(t, dst)
	dst.Close()
	if got != want {
		t.Fatalf("the restored store differs:\n%s\n---\n%s", want, got)
	}
	// Not into a data dir with a database; not from another file.
	f.Seek(0, 0)
	if _, err := Restore(dir, f, nil); !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "empty one") {
		t.Fatalf("restore into a used dir: %v", err)
	}
	if _, err := Restore(t.TempDir(), strings.NewReader("not a backup"), nil); err == nil || !strings.Contains(err.Error(), "not a cyan backup") {
		t.Fatalf("restore of another file: %v", err)
	}
}

// TestBackupDuringTraffic takes a backup while writers store messages and
// change records, each change in one transaction with a message: the
// restored store holds exactly the writes committed before one moment — a
// prefix of each writer's writes, each record with its message.
func TestBackupDuringTraffic(t *testing.T) {
	src := openDir(t, t.TempDir())
	defer src.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var acked [3]atomic.Int64
	for w := range 3 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				ch := fmt.Sprint("w", w)
				if err := src.Append(t0, &store.Message{Channel: ch, Role: store.RoleUser, Text: fmt.Sprint(i)}); err != nil {
					t.Error(err)
					return
				}
				err := src.DB().Update(func(txn *badger.Txn) error {
					key := fmt.Sprintf("%s%s\x00%08d", store.PrefixMemory, ch, i)
					if err := txn.Set([]byte(key), []byte(`{"n":`+fmt.Sprint(i)+`}`)); err != nil {
						return err
					}
					return txn.Set([]byte(fmt.Sprintf("%s%s\x00%08d", store.PrefixTheory, ch, i)), []byte(`{}`))
				})
				if err != nil {
					t.Error(err)
					return
				}
				acked[w].Store(int64(i + 1))
			}
		})
	}
	for acked[0].Load() < 50 || acked[1].Load() < 50 || acked[2].Load() < 50 {
		time.Sleep(time.Millisecond)
	}
	var before [3]int64
	for w := range before {
		before[w] = acked[w].Load()
	}
	var buf bytes.Buffer
	if _, err := WriteBackup(src, &buf, "test", t0); err != nil {
		t.Fatal(err)
	}
	var after [3]int64
	for w := range after {
		after[w] = acked[w].Load()
	}
	stop.Store(true)
	wg.Wait()
	dir := t.TempDir()
	if _, err := Restore(dir, &buf, nil); err != nil {
		t.Fatal(err)
	}
	dst := openDir(t, dir)
	defer dst.Close()
	for w := range 3 {
		ch := fmt.Sprint("w", w)
		msgs, _ := dst.Recent(ch, store.Window{Limit: 1 << 20})
		for i, m := range msgs {
			if m.Text != fmt.Sprint(i) {
				t.Fatalf("%s: message %d is %q: the backup is not a prefix", ch, i, m.Text)
			}
		}
		var mem, thy int
		dst.DB().View(func(txn *badger.Txn) error {
			for _, c := range []struct {
				prefix string
				n      *int
			}{{store.PrefixMemory + ch + "\x00", &mem}, {store.PrefixTheory + ch + "\x00", &thy}} {
				it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(c.prefix)})
				for it.Rewind(); it.Valid(); it.Next() {
					*c.n++
				}
				it.Close()
			}
			return nil
		})
		n := int64(len(msgs))
		if mem != thy || int64(mem) > n || int64(mem) < n-1 || n < before[w] || int64(mem) > after[w] {
			t.Fatalf("%s: %d messages, %d and %d records; acknowledged %d before the backup, %d after", ch, n, mem, thy, before[w], after[w])
		}
		t.Logf("%s: %d acknowledged before the backup, %d in it, %d after", ch, before[w], n, after[w])
	}
}

func TestScheduledBackupsKeepTheNewest(t *testing.T) {
	// A settable clock, not a synctest bubble: the store's own goroutines
	// must not share channels with a bubble.
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fill(t, st)
	clk := clocktest.New(time.Date(2000, 1, 1, 0, 0, 0, 0, time.Local))
	dir := t.TempDir()
	made := st.Journal().Subscribe(st.Journal().Last(), journal.Filter{Kinds: []journal.Kind{journal.BackupDone}})
	s := &Schedule{Store: st, Spec: "30 3 * * *", Dir: dir, Keep: 3, Version: "test", Clock: clk}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	for night := range 5 { // five nights, one backup each
		if !clk.WaitFor(1, 10*time.Second) {
			t.Fatalf("night %d: the schedule does not wait for its time", night+1)
		}
		step := 24 * time.Hour
		if night == 0 {
			step = 3*time.Hour + 30*time.Minute // to 03:30 of the first night
		}
		clk.Advance(step)
		evs, err := made.Next(ctx)
		var b journal.Backup
		if err != nil || len(evs) != 1 || evs[0].Decode(&b) != nil || b.Error != "" || filepath.Dir(b.File) != dir || b.Bytes == 0 {
			t.Fatalf("night %d: the journal told %+v (%+v, %v)", night+1, evs, b, err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	day := func(d int) string { return time.Date(2000, 1, d, 3, 30, 0, 0, time.Local).Format(backupName) }
	if want := []string{day(3), day(4), day(5)}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("backups = %v, want %v", names, want)
	}
	f, _ := os.Open(filepath.Join(dir, names[2]))
	defer f.Close()
	if _, err := Restore(t.TempDir(), f, nil); err != nil {
		t.Fatalf("a scheduled backup does not restore: %v", err)
	}
}
