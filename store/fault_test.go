package store

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

var faultTable = flag.Bool("fault-table", false, "print TestDamagedDataDir's table (case → outcome) as markdown")

// faultTune makes a small database many-filed: 1 MB memtables, so a few
// thousand messages fill several tables and leave a write-ahead log with
// data; values over 64 KB in the value log (as the store's 1 MB threshold
// puts a long message there), so the value log holds messages too; no
// compactions, so the files of a killed run stay as the kill left them.
func faultTune(o badger.Options) badger.Options {
	return o.WithMemTableSize(1 << 20).WithValueThreshold(64 << 10).WithValueLogFileSize(1 << 20).WithNumCompactors(0).
		WithBlockCacheSize(1 << 20).WithIndexCacheSize(1 << 20)
}

const faultMessages = 3000

// faultText is a message of ~600 bytes, its number in it; every 100th
// is 100 KB long (the value log's).
func faultText(i int) string {
	n := 13
	if i%100 == 99 {
		n = 2300
	}
	return fmt.Sprintf("message %05d: %s", i, strings.Repeat("the quick brown fox jumps over the lazy dog. ", n))
}

// writeFault stores n messages (a multiple of ten), in batches of ten,
// calling acked with each batch's ids once it returned.
func writeFault(t testing.TB, s *Store, n int, acked func([]string)) {
	for i := 0; i < n; i += 10 {
		var batch []*Message
		for j := i; j < i+10; j++ {
			batch = append(batch, &Message{Channel: fmt.Sprintf("c%d", j%3), Role: RoleUser, Text: faultText(j)})
		}
		if err := s.Append(t0.Add(time.Duration(i)*time.Second), batch...); err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(batch))
		for k, m := range batch {
			ids[k] = m.ID
		}
		acked(ids)
	}
}

// TestFaultChild is the killed writer of TestDamagedDataDir: run in a
// child process, it prints each acknowledged id and waits to be killed.
func TestFaultChild(t *testing.T) {
	dir := os.Getenv("CYAN_FAULT_CHILD")
	if dir == "" {
		t.Skip("the child of TestDamagedDataDir")
	}
	s, err := Open(Options{Dir: dir, tune: faultTune})
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(os.Stdout)
	writeFault(t, s, faultMessages, func(ids []string) {
		for _, id := range ids {
			fmt.Fprintln(w, id)
		}
		w.Flush()
	})
	fmt.Fprintln(w, "done")
	w.Flush()
	time.Sleep(time.Hour) // killed here
}

// killedDir has a child process write the messages and kills it (SIGKILL)
// once all are acknowledged; it returns the acknowledged ids.
func killedDir(t *testing.T, dir string) []string {
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), "CYAN_FAULT_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if line == "done" {
			break
		}
		if len(line) == 36 {
			acked = append(acked, line)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_, _ = io.Copy(io.Discard, out)
	_ = cmd.Wait()
	if len(acked) != faultMessages {
		t.Fatalf("the child acknowledged %d of %d messages", len(acked), faultMessages)
	}
	return acked
}

// stoppedDir writes the messages and closes the store cleanly.
func stoppedDir(t *testing.T, dir string, n int) []string {
	s, err := Open(Options{Dir: dir, tune: faultTune})
	if err != nil {
		t.Fatal(err)
	}
	var acked []string
	writeFault(t, s, n, func(ids []string) { acked = append(acked, ids...) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return acked
}

// damage is one way a file can be damaged.
type damage struct {
	name string
	file func(db string) string // the file damaged; "" when the data dir has none
	do   func(path string) error
}

func zeroFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, make([]byte, st.Size()), 0o600)
}

func truncateHalf(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.Truncate(path, st.Size()/2)
}

// flipBytes flips 64 bytes (fewer in a short file) spread over the middle
// half of the file (the attack that hid a quarter of the messages).
func flipBytes(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	n := min(64, len(b)/2)
	if n == 0 {
		return fmt.Errorf("%s is too short to flip", path)
	}
	for i := range n {
		b[len(b)/4+i*(len(b)/2)/n] ^= 0x5a
	}
	return os.WriteFile(path, b, 0o600)
}

// fileOf picks a file of the database folder: the largest with the
// extension (the one holding most data), or the named one.
func fileOf(ext string) func(db string) string {
	return func(db string) string {
		entries, _ := os.ReadDir(db)
		best, size := "", int64(-1)
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ext) {
				continue
			}
			info, err := e.Info()
			if err == nil && info.Size() > size {
				best, size = filepath.Join(db, e.Name()), info.Size()
			}
		}
		if ext == ".mem" && best != "" {
			// The log holding writes: the one that is not fresh.
			if w, err := scanWALFile(best); err == nil && w.end == walHeaderSize {
				return ""
			}
		}
		return best
	}
}

func named(name string) func(db string) string {
	return func(db string) string {
		if _, err := os.Stat(filepath.Join(db, name)); err != nil {
			return ""
		}
		return filepath.Join(db, name)
	}
}

func faultDamages() []damage {
	var ds []damage
	for _, f := range []struct {
		what string
		file func(string) string
	}{
		{"MANIFEST", named(badger.ManifestFilename)},
		{"table (.sst)", fileOf(".sst")},
		{"write-ahead log (.mem)", fileOf(".mem")},
		{"value log (.vlog)", fileOf(".vlog")},
		{"KEYREGISTRY", named(KeyRegistryFile)},
	} {
		ds = append(ds,
			damage{f.what + " missing", f.file, os.Remove},
			damage{f.what + " truncated to half", f.file, truncateHalf},
			damage{f.what + " zeroed", f.file, zeroFile},
			damage{f.what + " 64 bytes flipped", f.file, flipBytes},
		)
	}
	return ds
}

// filesOf lists the files of the data dir (the database folder and the
// folder of files moved aside), by base name.
func filesOf(t *testing.T, dir string) map[string]bool {
	out := map[string]bool{}
	for _, sub := range []string{"db", AsideDir} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		for _, e := range entries {
			out[strings.TrimSuffix(e.Name(), ".1")] = true
		}
	}
	return out
}

func copyDir(t *testing.T, from, to string) {
	err := filepath.Walk(from, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		if info.Name() == "cyan.lock" { // Badger's LOCK stays: a killed run leaves it
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDamagedDataDir damages a stopped data dir each way — after a clean
// stop and after a kill -9 — and opens it: every case either opens with
// every acknowledged message, or refuses with an error that names the
// damaged file and both ways out (cyan restore, cyan repair). No case
// panics, loses a table file, or opens with fewer messages. With
// -fault-table it prints the table of outcomes.
func TestDamagedDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and kills a database")
	}
	if raceOn {
		// Minutes under the race detector; the other store tests run the
		// same code (the checks, the record, the salvage) under it.
		t.Skip("too slow under the race detector")
	}
	base := t.TempDir()
	templates := []struct {
		name     string
		dir      string
		acked    []string
		noRecord bool // db.state removed: the first start after an upgrade from a cyan without it
	}{
		{name: "clean stop", dir: filepath.Join(base, "stopped")},
		{name: "kill -9", dir: filepath.Join(base, "killed")},
		{name: "clean stop, db.state removed", dir: filepath.Join(base, "stopped"), noRecord: true},
		{name: "kill -9, db.state removed", dir: filepath.Join(base, "killed"), noRecord: true},
	}
	templates[0].acked = stoppedDir(t, templates[0].dir, faultMessages)
	templates[1].acked = killedDir(t, templates[1].dir)
	templates[2].acked, templates[3].acked = templates[0].acked, templates[1].acked

	type faultCase struct {
		d    damage
		tmpl int
	}
	var cases []faultCase
	for _, d := range faultDamages() {
		for i := range templates {
			cases = append(cases, faultCase{d, i})
		}
	}
	rows := make([]string, len(cases))
	t.Run("cases", func(t *testing.T) {
		for i, c := range cases {
			tmpl := templates[c.tmpl]
			d := c.d
			name := d.name + " after a " + tmpl.name
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(base, fmt.Sprintf("case%d", i))
				copyDir(t, tmpl.dir, dir)
				if tmpl.noRecord {
					if err := os.Remove(filepath.Join(dir, StateFile)); err != nil {
						t.Fatal(err)
					}
				}
				db := filepath.Join(dir, "db")
				path := d.file(db)
				if path == "" {
					rows[i] = fmt.Sprintf("| %s | %s | (no such file: nothing to damage) | |", d.name, tmpl.name)
					return
				}
				if err := d.do(path); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				before := filesOf(t, dir)
				outcome, refused := openDamaged(t, name, dir, path, tmpl.acked, before)
				repaired := ""
				if refused {
					repaired = repairDamaged(t, name, dir, tmpl.acked)
				}
				rows[i] = fmt.Sprintf("| %s | %s | %s | %s |", d.name, tmpl.name, outcome, repaired)
			})
		}
	})
	table := "| damage | data dir | outcome | cyan repair NEW_DIR |\n|---|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
	if *faultTable {
		fmt.Print(table)
	} else {
		t.Log("\n" + table)
	}
}

// openDamaged opens a damaged data dir and checks the outcome; it
// returns the outcome's line for the table.
func openDamaged(t *testing.T, name, dir, damaged string, acked []string, before map[string]bool) (outcome string, refused bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: open panicked: %v", name, r)
			outcome = "PANIC"
		}
	}()
	var logged strings.Builder
	s, err := Open(Options{Dir: dir, tune: faultTune, Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	after := filesOf(t, dir)
	for f := range before {
		if strings.HasSuffix(f, ".sst") && !after[f] {
			t.Errorf("%s: the table %s was deleted", name, f)
		}
	}
	if err != nil {
		if !maps.Equal(before, after) {
			t.Errorf("%s: a refused start changed the data dir's files: %v → %v", name, before, after)
		}
		var de *DamageError
		msg := err.Error()
		switch {
		case !errors.As(err, &de):
			t.Errorf("%s: refused without naming the damage: %v", name, err)
		case !strings.Contains(msg, filepath.Base(damaged)) && !strings.Contains(msg, badger.ManifestFilename) &&
			!(filepath.Ext(damaged) == ".mem" && strings.Contains(msg, "*.mem")):
			t.Errorf("%s: the refusal names %s, not the damaged %s: %v", name, de.File, damaged, err)
		case !strings.Contains(msg, "cyan restore BACKUP") || !strings.Contains(msg, "cyan repair NEW_DIR"):
			t.Errorf("%s: the refusal does not say what to do: %v", name, err)
		}
		if de == nil {
			return "refused without naming the file: " + msg, false
		}
		return fmt.Sprintf("refuses to start: `%s`: %s", filepath.Base(de.File), de.Problem), true
	}
	defer s.Close()
	missing := 0
	for _, id := range acked {
		if _, err := s.Get(id); err != nil {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%s: opened with %d of %d acknowledged messages missing (shortfall reported: %v)", name, missing, len(acked), s.Shortfall())
		return fmt.Sprintf("OPENED WITH %d MESSAGES MISSING", missing), false
	}
	note := ""
	if strings.Contains(logged.String(), "moved aside") || strings.Contains(logged.String(), "out of the database") {
		note = " (the damaged file moved aside, logged)"
	}
	return fmt.Sprintf("opens with all %d messages%s", len(acked), note), false
}

// repairDamaged salvages a refused data dir into a new one, checks that
// the new one opens with what the report says it kept and that the
// damaged one was not changed, and returns the table's cell.
func repairDamaged(t *testing.T, name, dir string, acked []string) string {
	t.Helper()
	before := filesOf(t, dir)
	to := dir + ".new"
	rep, err := salvage(dir, to, nil, faultTune)
	if err != nil {
		t.Errorf("%s: repair: %v", name, err)
		return "REPAIR FAILED: " + err.Error()
	}
	t.Logf("%s: repair: %+v", name, rep)
	if after := filesOf(t, dir); !maps.Equal(before, after) {
		t.Errorf("%s: the repair changed the damaged data dir: %v → %v", name, before, after)
	}
	s, err := Open(Options{Dir: to, tune: faultTune})
	if err != nil {
		t.Errorf("%s: the repaired data dir does not open: %v", name, err)
		return "REPAIRED DIR DOES NOT OPEN"
	}
	defer s.Close()
	found := 0
	for _, id := range acked {
		if _, err := s.Get(id); err == nil {
			found++
		}
	}
	if found != rep.Messages {
		t.Errorf("%s: the repair reports %d messages, the new data dir has %d of the acknowledged", name, rep.Messages, found)
	}
	lost := "reports none lost"
	if rep.Lost() > 0 {
		lost = fmt.Sprintf("reports at least %d lost", rep.Lost())
	}
	switch {
	case found < len(acked) && rep.Lost() == 0 && rep.Recorded == 0:
		lost += " (no record to count against)"
	case found < len(acked) && rep.Lost() == 0:
		lost += " (the record predates the last writes)"
	}
	return fmt.Sprintf("%d of %d messages kept; %s", found, len(acked), lost)
}
