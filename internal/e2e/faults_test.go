package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/smallfs"
)

// configFile writes a config file outside the data dir and returns the
// environment entry that names it.
func configFile(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cyan.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return "CYAN_CONFIG=" + p
}

// noise is n bytes of words that do not compress (as a year of talk
// would not), in short words as people write them.
func noise(n int) string {
	raw := make([]byte, n*3/4)
	_, _ = rand.Read(raw)
	b := make([]byte, base64.StdEncoding.EncodedLen(len(raw)))
	base64.StdEncoding.Encode(b, raw)
	// Every seventh character becomes a space, in place: six-letter words.
	n = len(b) / 7 * 7
	for i := 6; i < n; i += 7 {
		b[i] = ' '
	}
	return string(b[:n])
}

// count lists a channel through the API, as messages does, and returns
// how many messages it holds, decoding their ids only: the disk test's
// channel holds megabytes of text a map of each message would copy.
func (d *daemon) count(t *testing.T, channel string) int {
	t.Helper()
	var out struct {
		Messages []struct {
			ID string `json:"id"`
		} `json:"messages"`
	}
	if code, err := d.getJSON("/api/v1/messages?limit=1000&channel="+channel, &out); err != nil || code != 200 {
		t.Fatalf("list %s: %d %v", channel, code, err)
	}
	for i, m := range out.Messages {
		if m.ID == "" {
			t.Fatalf("list %s: message %d has no id", channel, i)
		}
	}
	return len(out.Messages)
}

// TestASmallDiskFillsUp runs the real daemon on a 448 MB tmpfs that another
// file has mostly filled, and imports history until the disk is full: each
// acknowledged message survives a SIGTERM on the full disk and a restart,
// each refused batch and message got a 507 naming the data folder, reads go
// on, and writes resume by themselves once space is freed.
func TestASmallDiskFillsUp(t *testing.T) {
	t.Parallel()
	mnt := smallfs.Mount(t, 448<<20)
	fake, url := fakeLLM(t)
	dir := filepath.Join(mnt, "data")
	envv := env(dir, url, configFile(t, "store: {min_free_mb: 250}\n"))
	filler := filepath.Join(mnt, "filler")
	// Leave min_free, the space reserve and a preallocated write-ahead log
	// (16 MB each), and 8 MB to write.
	if _, err := smallfs.Fill(filler, (250+16+16+8)<<20); err != nil {
		t.Fatal(err)
	}
	d := start(t, dir, envv)
	refusal := func(what string, code int, out map[string]any) {
		t.Helper()
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != http.StatusInsufficientStorage || e["type"] != "disk_full" || !strings.Contains(msg, dir) || !strings.Contains(msg, "Free some space") {
			t.Fatalf("%s on a full disk: %d %v", what, code, out)
		}
	}
	at := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	batch := func(n int) []map[string]any {
		var lines []map[string]any
		for range n {
			at = at.Add(time.Minute)
			lines = append(lines, map[string]any{"time": at.Format(time.RFC3339), "channel": "diary", "user": "me", "text": noise(100 << 10)})
		}
		return lines
	}
	acked := 0
	for i := 0; ; i++ {
		if i == 200 {
			t.Fatal("the disk never filled")
		}
		code, out, err := d.post("/api/v1/import", map[string]any{"messages": batch(8)}, "Idempotency-Key", fmt.Sprint("b", i))
		if err != nil {
			t.Fatalf("batch %d: %v\n%s", i, err, d.stderr.String())
		}
		if code != 200 {
			refusal(fmt.Sprint("batch ", i), code, out)
			break
		}
		acked += int(out["added"].(float64))
	}
	t.Logf("%d messages (%d MB) imported before the disk was full", acked, acked/10)
	for i := range 3 {
		code, out, err := d.post("/api/v1/messages", map[string]any{"channel": "home", "text": fmt.Sprint("hello ", i)})
		if err != nil {
			t.Fatal(err)
		}
		refusal("a message", code, out)
	}
	if got := d.count(t, "diary"); got != min(acked, 1000) {
		t.Fatalf("reads on a full disk: %d messages, want %d", got, acked)
	}
	// Space comes back: writes resume, with no restart.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(llmtest.Reply{Text: "I can write again"})
	code, out, err := d.post("/api/v1/messages", map[string]any{"channel": "home", "text": "space is back"})
	if err != nil || code != 200 || fmt.Sprint(out["replies"]) != "[I can write again]" {
		t.Fatalf("once space is back: %d %v %v", code, out, err)
	}
	home := []string{out["message_id"].(string)}
	// Full again, then SIGTERM.
	if _, err := smallfs.Fill(filler, 40<<20); err != nil {
		t.Fatal(err)
	}
	code, out, _ = d.post("/api/v1/messages", map[string]any{"channel": "home", "text": "refused"})
	refusal("a message", code, out)
	d.stop(syscall.SIGTERM)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	d = start(t, dir, envv)
	if n := d.count(t, "diary"); n != min(acked, 1000) {
		t.Fatalf("after the restart the diary holds %d messages, want the %d acknowledged", n, acked)
	}
	got := d.messages(t, "home")
	if len(got) != 2 || got[0]["id"] != home[0] || got[1]["text"] != "I can write again" {
		t.Fatalf("after the restart home holds %v", got)
	}
}

// TestTheDataFolderRemoved: writes into a removed data folder are refused
// (503, naming it), and SIGTERM exits non-zero, saying why in the log.
func TestTheDataFolderRemoved(t *testing.T) {
	t.Parallel()
	_, url := fakeLLM(t)
	dir := filepath.Join(t.TempDir(), "data")
	d := start(t, dir, env(dir, url))
	if code, out, err := d.post("/api/v1/messages", map[string]any{"channel": "home", "text": "before"}); err != nil || code != 200 {
		t.Fatalf("before: %d %v %v", code, out, err)
	}
	// The daemon may write a file into the folder while it is being
	// removed ("directory not empty"), as it would under a user's rm -rf:
	// remove again until it is gone.
	var err error
	for range 20 {
		if err = os.RemoveAll(dir); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	code, out, err := d.post("/api/v1/messages", map[string]any{"channel": "home", "text": "into nothing"})
	if err != nil || code != http.StatusServiceUnavailable || !strings.Contains(fmt.Sprint(out), "was removed") {
		t.Fatalf("a write into the removed folder: %d %v %v", code, out, err)
	}
	d.stop(syscall.SIGTERM)
	if ee, ok := d.err.(interface{ ExitCode() int }); !ok || ee.ExitCode() == 0 {
		t.Fatalf("exit: %v, want a non-zero status", d.err)
	}
	if log := d.stderr.String(); !strings.Contains(log, "the store did not close cleanly") || !strings.Contains(log, "was removed while cyan was running") {
		t.Fatalf("the log does not say why:\n%s", log)
	}
}

// TestAClientGoneMidAnswer: a client that gives up before the answer
// (a timeout, Ctrl-C) leaves the turn running; its reply is stored, and
// the same message sent again with its idempotency key gets it.
func TestAClientGoneMidAnswer(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	dir := t.TempDir()
	d := start(t, dir, env(dir, url))
	for _, stream := range []bool{false, true} {
		ch := fmt.Sprint("gone-", stream)
		fake.Enqueue(llmtest.Reply{Text: "worth the wait", Delay: 1500 * time.Millisecond, ChunkDelay: 50 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		body := fmt.Sprintf(`{"channel":%q,"text":"take your time","stream":%v}`, ch, stream)
		req, _ := http.NewRequestWithContext(ctx, "POST", d.base+"/api/v1/messages", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "slow-1")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, err = resp.Body.Read(make([]byte, 1<<16))
			for err == nil {
				_, err = resp.Body.Read(make([]byte, 1<<16))
			}
			resp.Body.Close()
		}
		cancel()
		var ms []map[string]any
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if ms = d.messages(t, ch); len(ms) == 2 {
				break
			}
		}
		if len(ms) != 2 || ms[1]["text"] != "worth the wait" {
			t.Fatalf("stream=%v: after the client left the channel holds %v", stream, ms)
		}
		code, out, err := d.post("/api/v1/messages", map[string]any{"channel": ch, "text": "take your time"}, "Idempotency-Key", "slow-1")
		if err != nil || code != 200 || out["replayed"] != true || fmt.Sprint(out["replies"]) != "[worth the wait]" {
			t.Fatalf("stream=%v: the retry: %d %v %v", stream, code, out, err)
		}
	}
}

func TestCyanStop(t *testing.T) {
	t.Parallel()
	_, url := fakeLLM(t)
	dir := t.TempDir()
	d := start(t, dir, env(dir, url))
	stdout, stderr, rc := cli(t, d.cliEnv(), "", "stop")
	if rc != 0 || !strings.Contains(stdout, "stopped cyan (pid") {
		t.Fatalf("cyan stop: rc=%d %q %q", rc, stdout, stderr)
	}
	select {
	case <-d.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the daemon is still running after cyan stop returned")
	}
	if d.err != nil {
		t.Fatalf("the daemon's exit: %v\n%s", d.err, d.stderr.String())
	}
	stdout, _, rc = cli(t, d.cliEnv(), "", "stop")
	if rc != 0 || !strings.Contains(stdout, "no cyan daemon is running") {
		t.Fatalf("cyan stop with none running: rc=%d %q", rc, stdout)
	}
}
