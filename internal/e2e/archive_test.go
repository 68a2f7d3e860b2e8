package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// lived gives a daemon a little of everything: a remembered item, a closed
// topic with its record, facts and relation lines, and the day's rollup.
func lived(t *testing.T, d *daemon, fake *llmtest.Server) {
	t.Helper()
	fake.Enqueue(
		llmtest.Reply{Text: "好，我记住了", ToolCalls: []llm.ToolCall{{ID: "r1", Name: "remember", Arguments: `{"text":"alice's cat is named nyalia"}`}}},
		llmtest.Reply{Text: `{"action":"add","kind":"note","content":"alice's cat is named nyalia"}`},
		llmtest.Reply{Text: "<empty_reply>"},
	)
	say(t, d, "home", "my cat is called nyalia, remember that")
	for _, text := range []string{"my tomatoes are ripe", "that's settled then"} {
		say(t, d, "garden", text)
	}
	later := time.Now().Add(48 * time.Hour).Format(time.RFC3339)
	if code, out, err := d.post("/api/v1/events/rollup", map[string]string{"now": later}); err != nil || code != 200 {
		t.Fatalf("rollup: %d %v %v", code, out, err)
	}
}

// view is what a user sees of a daemon, to compare two.
func view(t *testing.T, d *daemon, channels ...string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, ch := range channels {
		out["messages "+ch] = d.messages(t, ch)
	}
	for _, path := range []string{"/api/v1/memory?all=1", "/api/v1/events?limit=1000", "/api/v1/objects", "/api/v1/relations", "/api/v1/theories"} {
		code, body, err := d.get(path)
		if err != nil || code != 200 {
			t.Fatalf("GET %s: %d %v", path, code, err)
		}
		delete(body, "pending") // rollups due as of now: a matter of the clock
		delete(body, "usage")   // the workspace's logs of recent turns, kept in memory
		delete(body, "gc")
		out[path] = timeless(body)
	}
	return out
}

// timeless drops what is computed as of now or of the turn counter (R, a
// relation's weight today, the turn), which two views taken at different
// moments see differently; what is stored stays.
func timeless(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"r", "R", "weight", "turn", "T"} {
			delete(x, k)
		}
		for k, e := range x {
			x[k] = timeless(e)
		}
	case []any:
		for i, e := range x {
			x[i] = timeless(e)
		}
	}
	return v
}

func same(t *testing.T, what string, a, b any) {
	t.Helper()
	ja, _ := json.MarshalIndent(a, "", " ")
	jb, _ := json.MarshalIndent(b, "", " ")
	if string(ja) != string(jb) {
		t.Fatalf("%s differ:\n%s\n---\n%s", what, ja, jb)
	}
}

// TestBackupAndExportMoveADaemon: a backup taken while a client talks
// restores into a daemon with the same history, workspace and event log
// (the busy channel up to the backup's moment); an export imported into an
// empty data dir gives a daemon whose export is the same, line for line.
func TestBackupAndExportMoveADaemon(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	fake.SetDefault(lifeLog)
	dir := t.TempDir()
	cfg := configFile(t, "limits: {messages_per_minute: 0}\n")
	d := start(t, dir, env(dir, url, cfg))
	lived(t, d, fake)
	if n := len(d.messages(t, "garden")); n < 4 {
		t.Fatalf("garden: %d messages", n)
	}
	before := view(t, d, "home", "garden")

	// A backup while a client keeps talking in another channel.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var sent []string
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			code, out, err := d.post("/api/v1/messages", map[string]string{"channel": "busy", "text": fmt.Sprint("busy ", i)})
			if err != nil || code != 200 {
				t.Errorf("busy %d: %d %v %v", i, code, out, err)
				return
			}
			sent = append(sent, out["message_id"].(string))
		}
	})
	time.Sleep(300 * time.Millisecond) // let the client get going
	backup := filepath.Join(t.TempDir(), "cyan.backup")
	stdout, stderr, rc := cli(t, d.cliEnv(), "", "backup", backup)
	if rc != 0 || !strings.Contains(stdout, "backed up") {
		t.Fatalf("cyan backup: rc=%d %s %s", rc, stdout, stderr)
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()

	restored := t.TempDir()
	renv := env(restored, url, cfg)
	if stdout, stderr, rc := cli(t, renv, "", "restore", backup); rc != 0 || !strings.Contains(stdout, "restored the backup") {
		t.Fatalf("cyan restore: rc=%d %s %s", rc, stdout, stderr)
	}
	if _, stderr, rc := cli(t, renv, "", "restore", backup); rc == 0 || !strings.Contains(stderr, "already has a database") {
		t.Fatalf("cyan restore into a used data dir: rc=%d %s", rc, stderr)
	}
	r := start(t, restored, renv)
	same(t, "the restored daemon and the source", view(t, r, "home", "garden"), before)
	busy := r.messages(t, "busy")
	var in []string
	for _, m := range busy {
		if m["role"] == "user" {
			in = append(in, m["id"].(string))
		}
	}
	if len(in) == 0 || len(in) > len(sent) || fmt.Sprint(in) != fmt.Sprint(sent[:len(in)]) {
		t.Fatalf("busy: the backup holds %d of %d sent messages, not the first ones", len(in), len(sent))
	}
	t.Logf("the backup holds %d of the %d messages sent while it was taken", len(in), len(sent))
	r.stop(syscall.SIGTERM)

	// Export, import into an empty data dir, export again.
	first := filepath.Join(t.TempDir(), "a.jsonl")
	if _, stderr, rc := cli(t, d.cliEnv(), "", "export", "--format", "jsonl", first); rc != 0 {
		t.Fatalf("cyan export: rc=%d %s", rc, stderr)
	}
	all := view(t, d, "home", "garden", "busy")
	d.stop(syscall.SIGTERM)
	moved := t.TempDir()
	menv := env(moved, url, cfg)
	stdout, stderr, rc = cli(t, menv, "", "import", first)
	if rc != 0 || !strings.Contains(stdout, "imported") {
		t.Fatalf("cyan import of the export: rc=%d %s %s", rc, stdout, stderr)
	}
	second := filepath.Join(t.TempDir(), "b.jsonl")
	if _, stderr, rc := cli(t, menv, "", "export", second); rc != 0 { // offline: no daemon runs on it
		t.Fatalf("cyan export (offline): rc=%d %s", rc, stderr)
	}
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	if len(la) < 20 || strings.Join(la[1:], "\n") != strings.Join(lb[1:], "\n") {
		t.Fatalf("export → import → export is not the same (%d and %d lines)", len(la), len(lb))
	}
	for _, kind := range []string{`"type":"message"`, `"space":"workspace"`, `"space":"event"`, `"space":"object"`, `"space":"relation"`} {
		if !strings.Contains(string(a), kind) {
			t.Errorf("the export has no %s line", kind)
		}
	}
	m := start(t, moved, menv)
	same(t, "the imported daemon and the source", view(t, m, "home", "garden", "busy"), all)
}
