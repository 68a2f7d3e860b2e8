package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// TestRepairKeepsATableCutAtItsEnd: cyan repair on a data dir whose one
// table was cut where its index is keeps the messages of the blocks
// before the cut and says how many of the recorded it kept.
func TestRepairKeepsATableCutAtItsEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a database")
	}
	dir := t.TempDir()
	s, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := 0; i < n; i += 100 {
		var batch []*store.Message
		for j := i; j < i+100; j++ {
			batch = append(batch, &store.Message{Channel: "home", Role: store.RoleUser, Text: fmt.Sprintf("message %d", j)})
		}
		if err := s.Append(at.Add(time.Duration(i)*time.Second), batch...); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "db", "*.sst"))
	if len(tables) != 1 {
		t.Fatalf("tables %v, want one", tables)
	}
	b, err := os.ReadFile(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	// The index and the footer: the last tenth of the file and more.
	if err := os.WriteFile(tables[0], b[:len(b)*9/10], 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CYAN_DATA_DIR": dir}
	to := filepath.Join(t.TempDir(), "repaired")
	rc, out, errs := runCmd(env, "repair", to)
	if rc != 0 {
		t.Fatalf("repair: exit %d, %s %s", rc, out, errs)
	}
	var kept, recorded, lost int
	for _, line := range strings.Split(out, "\n") {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "messages: %d kept of %d recorded: at least %d LOST", &kept, &recorded, &lost); err == nil {
			break
		}
	}
	t.Logf("%s", out)
	if recorded != n || kept == 0 || kept+lost != n || !strings.Contains(out, "read from its start") {
		t.Fatalf("repair kept %d of %d recorded, %d lost:\n%s", kept, recorded, lost, out)
	}
	s, err = store.Open(store.Options{Dir: to})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Recent("home", store.Window{Limit: n})
	if err != nil || len(got) != kept {
		t.Fatalf("the repaired data dir holds %d messages (%v), the repair said %d", len(got), err, kept)
	}
}
