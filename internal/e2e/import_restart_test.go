package e2e

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// freeAddr is a loopback address nothing listens on now, so a daemon
// started again keeps the address its clients know. Its port is below
// Linux's ephemeral range (32768 and up): a port the kernel gave out for
// ":0" could, once the daemon is killed, be given to another test's
// listener, and a client waiting for the daemon would find that one.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 200 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		return addr
	}
	t.Fatal("no free loopback port in 20000–31999")
	return ""
}

// TestImportSurvivesADaemonRestart kills the daemon (kill -9) in the middle
// of a cyan import and starts it again: cyan import waits, sends the batch
// it was sending again with the same idempotency key, and finishes; every
// line is stored once.
func TestImportSurvivesADaemonRestart(t *testing.T) {
	t.Parallel()
	_, url := fakeLLM(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	envv := append(env(dir, url), "CYAN_ADDR="+addr)
	const lines = 8000 // four batches of cyan import's 2000: the kill comes after the first
	file := filepath.Join(t.TempDir(), "history.jsonl")
	var b strings.Builder
	// The history ends three days ago: an old one would have the event log
	// roll up every empty period since, to today, once the import is final.
	at := time.Now().UTC().Truncate(time.Hour).Add(-lines*time.Minute - 72*time.Hour)
	for i := range lines {
		fmt.Fprintf(&b, `{"time":%q,"channel":"old","user":"ann","text":"line %d of a long history, with some words in it"}`+"\n", at.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), i)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	d := start(t, dir, envv)
	imp := exec.Command(binary, "import", "--retry-for", "60s", file)
	imp.Env = envv
	var out strings.Builder
	imp.Stdout = &out
	pr, pw, _ := os.Pipe()
	imp.Stderr = pw
	if err := imp.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	progress := make(chan struct{}, 1)
	var errOut strings.Builder
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(pr)
		sc.Split(bufio.ScanRunes)
		for sc.Scan() {
			errOut.WriteString(sc.Text())
			if strings.Contains(errOut.String(), "messages") {
				select {
				case progress <- struct{}{}:
				default:
				}
			}
		}
	}()
	select {
	case <-progress:
	case <-time.After(60 * time.Second):
		t.Fatal("cyan import showed no progress")
	}
	d.kill()
	time.Sleep(300 * time.Millisecond) // the import finds no daemon for a while
	d = start(t, dir, envv)
	err := imp.Wait()
	<-readDone
	if err != nil {
		t.Fatalf("cyan import: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	var added, skipped int
	if _, err := fmt.Sscanf(out.String(), "imported %d messages (%d were already there)", &added, &skipped); err != nil || added != lines || skipped != 0 {
		t.Fatalf("cyan import said %q (%v); want %d added", out.String(), err, lines)
	}
	if !strings.Contains(errOut.String(), "the daemon is not answering") {
		t.Fatalf("the import never waited for the daemon: the kill came after it was done\n%s", errOut.String())
	}
	d.stop(syscall.SIGTERM)
	var st *store.Store
	st, err = store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Recent("old", store.Window{Limit: 2 * lines})
	if err != nil || len(got) != lines {
		t.Fatalf("the channel holds %d messages, want %d (%v)", len(got), lines, err)
	}
}

func TestImportSaysTheDaemonStopped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "h.jsonl")
	os.WriteFile(file, []byte(`{"time":"2024-01-01T10:00:00Z","channel":"c","text":"hi"}`+"\n"), 0o600)
	envv := append(env(dir, "http://127.0.0.1:9/v1"), "CYAN_ADDR="+freeAddr(t))
	_, stderr, rc := cli(t, envv, "", "import", "--retry-for", "300ms", file)
	if rc != 3 || !strings.Contains(stderr, "the daemon stopped answering during the import") || !strings.Contains(stderr, "Start it again (cyan serve)") || strings.Contains(stderr, "fix the file") {
		t.Fatalf("rc=%d\n%s", rc, stderr)
	}
}
