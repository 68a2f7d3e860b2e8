package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
)

type failing struct{ llm.Client }

func (failing) Chat(context.Context, llm.Request) (*llm.Response, error) {
	return nil, errors.New("boom")
}

func TestNilRecordsNothingAndErrorsAreCounted(t *testing.T) {
	var none *Metrics
	none.Turn("private", false, "answered", time.Second)
	none.ToolCall("x", "allow")
	none.Recall("", "api", time.Second)
	none.Backup(nil)
	none.Store(nil)
	if c := none.LLM(failing{}, "openai", nil); c == nil {
		t.Fatal("a nil Metrics must hand the client back")
	}

	m := New()
	c := m.LLM(failing{}, "openai", func(context.Context) string { return "main-observer" })
	_, _ = c.Chat(llm.WithStep(context.Background(), "compress"), llm.Request{})
	m.Backup(errors.New("disk"))
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out := rec.Body.String()
	for _, want := range []string{
		`cyan_model_errors_total{kind="other",provider="openai",step="compress"} 1`,
		`cyan_model_requests_total{account="main-observer",outcome="error",provider="openai",step="compress"} 1`,
		`cyan_backups_total{outcome="failed"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
}

// TestFollowerCountsWhatTheJournalTells: turns and scheduled backups are
// counted from the journal, and a part restarted (Run again) counts on
// from where it stopped, not twice.
func TestFollowerCountsWhatTheJournalTells(t *testing.T) {
	j, err := journal.Open(journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := New()
	f := m.Follow(j)
	j.Post(journal.New(journal.TurnDone, "home", journal.Turn{MessageID: "1", Kind: "private", Outcome: journal.TurnAnswered, Millis: 1500}))
	proactive := journal.New(journal.TurnDone, "home", journal.Turn{MessageID: "2", Kind: "private", Outcome: journal.TurnFailed})
	proactive.Proactive = true
	j.Post(proactive)
	j.Post(journal.New(journal.BackupDone, "", journal.Backup{File: "cyan-20000101-033000.backup", Bytes: 10}))
	j.Post(journal.New(journal.BackupDone, "", journal.Backup{Error: "disk full"}))
	j.Close()     // Run reads everything posted, then ends
	for range 2 { // the second run is a restart: nothing new to count
		if err := f.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out := rec.Body.String()
	for _, want := range []string{
		`cyan_turns_total{kind="private",outcome="answered",proactive="false"} 1`,
		`cyan_turns_total{kind="private",outcome="failed",proactive="true"} 1`,
		`cyan_turn_seconds_sum{kind="private"} 1.5`,
		`cyan_backups_total{outcome="made"} 1`,
		`cyan_backups_total{outcome="failed"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
}

// TestStoreBytesWithBadgerMetricsOff: the store opens Badger with its
// metrics off, where Badger's own Size reads 0; the size gauges count the
// store's files instead.
func TestStoreBytesWithBadgerMetricsOff(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := st.Append(time.Now(), &store.Message{Channel: "c", Role: store.RoleUser, Text: fmt.Sprint("message ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil { // flushes the memtable into a table
		t.Fatal(err)
	}
	if st, err = store.Open(store.Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := New()
	m.Store(st)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, part := range []string{"lsm", "vlog"} {
		var v float64
		line := `cyan_store_bytes{part="` + part + `"} `
		for l := range strings.Lines(rec.Body.String()) {
			if rest, ok := strings.CutPrefix(l, line); ok {
				v, _ = strconv.ParseFloat(strings.TrimSpace(rest), 64)
			}
		}
		if v <= 0 {
			t.Errorf("%s%v, want above 0", line, v)
		}
	}
}
