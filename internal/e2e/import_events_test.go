package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/importer"
)

// locomoSessions reads a LoCoMo-format file's conversations and how many
// sessions with turns each has, and how many turns in all.
func locomoSessions(t *testing.T, path string) (sessions map[string]int, turns int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var convs []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(raw, &convs); err != nil {
		t.Fatal(err)
	}
	sessions = map[string]int{}
	for _, c := range convs {
		for k, v := range c.Conversation {
			if !strings.HasPrefix(k, "session_") || strings.HasSuffix(k, "_date_time") {
				continue
			}
			var ts []json.RawMessage
			if json.Unmarshal(v, &ts) == nil && len(ts) > 0 {
				sessions[c.SampleID]++
				turns += len(ts)
			}
		}
	}
	return sessions, turns
}

type eventList struct {
	Events []struct {
		ID      string `json:"id"`
		Level   string `json:"level"`
		Title   string `json:"title"`
		Pending any    `json:"pending"`
	} `json:"events"`
}

func (d *daemon) events(t *testing.T, channel, level string) eventList {
	t.Helper()
	code, out, err := d.get("/api/v1/events?limit=100000&level=" + level + "&channel=" + url.QueryEscape(channel))
	if err != nil || code != 200 {
		t.Fatalf("events of %s: %d %v", channel, code, err)
	}
	b, _ := json.Marshal(out)
	var l eventList
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// titled counts a channel's event-level records that have their title.
func (d *daemon) titled(t *testing.T, channel string) int {
	n := 0
	for _, e := range d.events(t, channel, "event").Events {
		if e.Title != "" && e.Pending == nil {
			n++
		}
	}
	return n
}

// builds counts the daemon's log lines saying it built a channel's events
// from an import.
func (d *daemon) builds(channel string) int {
	n := 0
	for _, line := range strings.Split(d.stderr.String(), "\n") {
		if strings.Contains(line, "events built from imported history") && strings.Contains(line, "channel="+channel+" ") {
			n++
		}
	}
	return n
}

// testImportBuildsEvents imports a LoCoMo-format file through the real
// binary and checks that the daemon builds one titled event record per
// session, that the records are recalled, and that importing the file
// again adds neither messages nor records.
func testImportBuildsEvents(t *testing.T, path string, wait time.Duration) {
	fake, llmURL := fakeLLM(t)
	fake.SetDefault(lifeLog)
	dir := t.TempDir()
	d := start(t, dir, env(dir, llmURL))
	sessions, turns := locomoSessions(t, path)

	stdout, stderr, rc := cli(t, d.cliEnv(), "", "import", "--format", "locomo", path)
	if rc != 0 || !strings.Contains(stdout, fmt.Sprintf("imported %d messages (0 were already there)", turns)) {
		t.Fatalf("cyan import: rc=%d out=%q err=%q", rc, stdout, stderr)
	}
	deadline := time.Now().Add(wait)
	for ch, n := range sessions {
		for d.builds(ch) < 1 || d.titled(t, ch) < n {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d builds, %d of %d sessions titled\n%s", ch, d.builds(ch), d.titled(t, ch), n, d.stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got := len(d.events(t, ch, "event").Events); got != n {
			t.Fatalf("%s: %d event records for %d sessions", ch, got, n)
		}
		if days := len(d.events(t, ch, "day").Events); days == 0 {
			t.Fatalf("%s: no day records: the rollups the history implies were not built", ch)
		}
	}
	before := map[string]int{}
	for ch := range sessions {
		before[ch] = len(d.events(t, ch, "").Events)
	}

	// The records are recalled beside the messages, in their channel.
	var ch0 string
	for ch := range sessions {
		ch0 = ch
		break
	}
	for {
		code, out, err := d.post("/api/v1/recall", map[string]any{"prompt": "alice told me about her garden", "channel": ch0, "mode": "search", "max_results": 5})
		if err != nil || code != 200 {
			t.Fatalf("recall: %d %v %v", code, out, err)
		}
		if strings.Contains(fmt.Sprint(out["results"]), "kind:event") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no event record recalled: %v", out)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Importing again adds nothing: no message, and, once the daemon has
	// built the import's history again, no record.
	stdout, _, rc = cli(t, d.cliEnv(), "", "import", "--format", "locomo", path)
	if rc != 0 || !strings.Contains(stdout, fmt.Sprintf("imported 0 messages (%d were already there)", turns)) {
		t.Fatalf("second import: rc=%d out=%q", rc, stdout)
	}
	for ch := range sessions {
		for d.builds(ch) < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the second import was not built", ch)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if after := len(d.events(t, ch, "").Events); after != before[ch] {
			t.Fatalf("%s: %d records after the second import, %d before", ch, after, before[ch])
		}
	}
}

func TestImportBuildsTheEventLog(t *testing.T) {
	t.Parallel()
	testImportBuildsEvents(t, recentCopy(t, filepath.Join("..", "..", "events", "testdata", "locomo-mini.json")), time.Minute)
}

// recentCopy writes a copy of a LoCoMo file whose conversations each end
// three days ago, by whole days (times of day and the gaps between
// sessions kept). A history from 2023 has the event log roll up every
// day, week, month and year since, to today — thousands of empty periods
// for a few sessions, and most of this test's time; three days back
// leaves completed days to roll up.
func recentCopy(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var convs []map[string]any
	if err := json.Unmarshal(raw, &convs); err != nil {
		t.Fatal(err)
	}
	for _, c := range convs {
		conv, _ := c["conversation"].(map[string]any)
		var last time.Time
		for k, v := range conv {
			if s, ok := v.(string); ok && strings.HasSuffix(k, "_date_time") {
				at, err := time.Parse(importer.LoCoMoTimeLayout, strings.TrimSpace(s))
				if err != nil {
					t.Fatalf("%s: %s: %v", path, k, err)
				}
				if at.After(last) {
					last = at
				}
			}
		}
		if last.IsZero() {
			t.Fatalf("%s: a conversation without session times", path)
		}
		days := int(time.Since(last).Hours()/24) - 3
		for k, v := range conv {
			if s, ok := v.(string); ok && strings.HasSuffix(k, "_date_time") {
				at, _ := time.Parse(importer.LoCoMoTimeLayout, strings.TrimSpace(s))
				conv[k] = at.AddDate(0, 0, days).Format(importer.LoCoMoTimeLayout)
			}
		}
	}
	out, err := json.Marshal(convs)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(copyPath, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return copyPath
}

// TestImportBuildsTheEventLogOfTheLoCoMoDevFile does the same with the
// LoCoMo development file (not shipped with cyan). It takes about a minute
// on two cores, so it runs only when CYAN_LOCOMO names the file and not
// with -short — the same switches as recall's LoCoMo tests;
// TestImportBuildsTheEventLog runs the same checks on every run with the
// small file.
func TestImportBuildsTheEventLogOfTheLoCoMoDevFile(t *testing.T) {
	t.Parallel()
	p := os.Getenv("CYAN_LOCOMO")
	if p == "" {
		t.Skip("set CYAN_LOCOMO to the LoCoMo development file to run this test")
	}
	if testing.Short() {
		t.Skip("the LoCoMo import takes a minute; run without -short")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("CYAN_LOCOMO=%s: %v", p, err)
	}
	testImportBuildsEvents(t, p, 5*time.Minute)
}
