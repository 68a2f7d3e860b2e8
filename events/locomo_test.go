package events

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// loadLoCoMo reads a file in the LoCoMo benchmark's format into messages,
// one channel per conversation (its sample_id): each turn keeps its dia_id
// as the external id and its session's time, 30 seconds apart. (The
// importer of the `cyan import` command owns this for real; the test needs
// only enough of it to store history.)
func loadLoCoMo(t testing.TB, path string) (map[string][]*store.Message, map[string]int) {
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
	out := map[string][]*store.Message{}
	sessions := map[string]int{}
	for _, c := range convs {
		var keys []int
		for k := range c.Conversation {
			if n, ok := strings.CutPrefix(k, "session_"); ok && !strings.HasSuffix(k, "_date_time") {
				if i, err := strconv.Atoi(n); err == nil {
					keys = append(keys, i)
				}
			}
		}
		sort.Ints(keys)
		for _, i := range keys {
			var when string
			_ = json.Unmarshal(c.Conversation[fmt.Sprintf("session_%d_date_time", i)], &when)
			at, err := time.ParseInLocation("3:04 pm on 2 January, 2006", when, time.UTC)
			if err != nil {
				t.Fatalf("%s session %d time %q: %v", c.SampleID, i, when, err)
			}
			var turns []struct {
				Speaker string `json:"speaker"`
				DiaID   string `json:"dia_id"`
				Text    string `json:"text"`
			}
			if err := json.Unmarshal(c.Conversation[fmt.Sprintf("session_%d", i)], &turns); err != nil {
				t.Fatal(err)
			}
			if len(turns) > 0 {
				sessions[c.SampleID]++
			}
			for j, tu := range turns {
				out[c.SampleID] = append(out[c.SampleID], &store.Message{
					Channel: c.SampleID, Role: store.RoleUser, User: tu.Speaker, Kind: "group", Text: tu.Text,
					Time: at.Add(time.Duration(j) * 30 * time.Second), ExternalID: tu.DiaID,
				})
			}
		}
	}
	return out, sessions
}

func testLoCoMo(t *testing.T, path string) {
	f := newFixture(t, day(2026, 1, 1, 0, 0), testConfig())
	convs, sessions := loadLoCoMo(t, path)
	ctx := context.Background()
	for ch, msgs := range convs {
		if err := f.st.AppendHistory(msgs...); err != nil {
			t.Fatal(err)
		}
		rep, err := f.log.BuildHistory(ctx, ch, time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		// LoCoMo's sessions are days apart: one topic, one event each.
		evs := f.events(t, ch, LevelEvent)
		if rep.Written != sessions[ch] || len(evs) != sessions[ch] {
			t.Fatalf("%s: %d sessions, %d records (report %+v)", ch, sessions[ch], len(evs), rep)
		}
		days := f.events(t, ch, LevelDay)
		if len(days) == 0 || len(f.events(t, ch, LevelYear)) == 0 || len(rep.Pass.Pending) != 0 {
			t.Fatalf("%s: %d day records, pending %+v", ch, len(days), rep.Pass.Pending)
		}
		first, err := f.st.Get(evs[0].Source.FirstMessageID)
		if err != nil || first.ExternalID != "D1:1" {
			t.Fatalf("%s: the first record starts at %+v (%v)", ch, first, err)
		}
		// Building again adds nothing.
		rep, err = f.log.BuildHistory(ctx, ch, time.Time{}, time.Time{})
		if err != nil || rep.Written != 0 || rep.Kept != sessions[ch] {
			t.Fatalf("%s: second build %+v %v", ch, rep, err)
		}
	}
}

func TestLoCoMoHistoryBuildsOneEventPerSession(t *testing.T) {
	testLoCoMo(t, "testdata/locomo-mini.json")
}

// TestLoCoMoDevSet runs the same on the full LoCoMo development file when
// CYAN_LOCOMO names it (the file is not shipped with cyan; the same
// variable as recall's and internal/e2e's LoCoMo tests).
func TestLoCoMoDevSet(t *testing.T) {
	path := os.Getenv("CYAN_LOCOMO")
	if path == "" {
		t.Skip("set CYAN_LOCOMO to the LoCoMo development file to run this")
	}
	testLoCoMo(t, path)
}
