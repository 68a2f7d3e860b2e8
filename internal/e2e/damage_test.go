package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestADamagedDatabaseRefusesToStart runs the real binary on a data dir
// whose MANIFEST was cut in half while it was stopped (the attack that
// made the daemon start empty and delete two of three tables): cyan serve
// refuses, naming the file and both ways out, and removes nothing; cyan
// doctor fails the database check the same way; cyan repair copies every
// message into a new data dir, where the daemon starts with all of them
// and /healthz says ok.
func TestADamagedDatabaseRefusesToStart(t *testing.T) {
	t.Parallel()
	_, url := fakeLLM(t)
	dir := filepath.Join(t.TempDir(), "data")
	d := start(t, dir, env(dir, url))
	at := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	const n = 300
	var lines []map[string]any
	for i := range n {
		lines = append(lines, map[string]any{"time": at.Add(time.Duration(i) * time.Minute).Format(time.RFC3339), "channel": "diary", "user": "me", "text": fmt.Sprint("entry ", i)})
	}
	if code, out, err := d.post("/api/v1/import", map[string]any{"messages": lines}); err != nil || code != 200 || out["added"] != float64(n) {
		t.Fatalf("import: %d %v %v", code, out, err)
	}
	d.stop(syscall.SIGTERM)

	db := filepath.Join(dir, "db")
	tables, _ := filepath.Glob(filepath.Join(db, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no table after a clean stop")
	}
	manifest := filepath.Join(db, "MANIFEST")
	st, err := os.Stat(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(manifest, st.Size()/2); err != nil {
		t.Fatal(err)
	}

	d = tryStart(t, dir, env(dir, url))
	<-d.exited
	log := d.stderr.String()
	if d.base != "" || d.err == nil {
		t.Fatalf("cyan serve started on a damaged database:\n%s", log)
	}
	for _, want := range []string{manifest, "cyan restore BACKUP", "cyan repair NEW_DIR", "nothing in it was changed or removed"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the refusal does not say %q:\n%s", want, log)
		}
	}
	t.Logf("cyan serve on the damaged data dir:\n%s", log)
	if strings.Contains(log, "panic") {
		t.Fatalf("the refusal is a panic:\n%s", log)
	}
	for _, f := range tables {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("the table %s is gone after the refused start: %v", f, err)
		}
	}

	out, _, code := cli(t, env(dir, url), "", "doctor", "--json", "--timeout", "5s")
	if code == 0 || !strings.Contains(out, `"name": "database"`) || !strings.Contains(out, "MANIFEST") || !strings.Contains(out, "cyan repair NEW_DIR") {
		t.Fatalf("cyan doctor on the damaged database (exit %d):\n%s", code, out)
	}

	repaired := filepath.Join(t.TempDir(), "repaired")
	out, errOut, code := cli(t, env(dir, url), "", "repair", repaired)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("%d kept of %d recorded: none lost", n, n)) {
		t.Fatalf("cyan repair (exit %d):\n%s\n%s", code, out, errOut)
	}
	t.Logf("cyan repair:\n%s", out)
	d = start(t, repaired, env(repaired, url))
	if got := d.messages(t, "diary"); len(got) != n {
		t.Fatalf("the repaired data dir has %d of %d messages", len(got), n)
	}
	if code, h, err := d.get("/healthz"); err != nil || code != 200 || h["status"] != "ok" {
		t.Fatalf("healthz on the repaired data dir: %d %v %v", code, h, err)
	}
}
