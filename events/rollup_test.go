package events

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/store"
)

// history stores two topics a day, at 10:00 and 20:00, for the days
// [from, to) with store.AppendHistory.
func history(t testing.TB, st *store.Store, channel string, from, to time.Time) int {
	t.Helper()
	var msgs []*store.Message
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		for _, h := range []int{10, 20} {
			at := d.Add(time.Duration(h) * time.Hour)
			msgs = append(msgs,
				&store.Message{Channel: channel, Role: store.RoleUser, User: "alice", Text: fmt.Sprintf("topic %s %d", d.Format("0102"), h), Time: at},
				&store.Message{Channel: channel, Role: store.RoleAssistant, User: "青蓝", Text: "I see", Time: at.Add(time.Minute)},
				&store.Message{Channel: channel, Role: store.RoleUser, User: "alice", Text: "ok", Time: at.Add(5 * time.Minute)},
			)
		}
	}
	if err := st.AppendHistory(msgs...); err != nil {
		t.Fatal(err)
	}
	return len(msgs)
}

func labels(evs []*Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Label)
	}
	return out
}

func TestRollupsOfASyntheticMonth(t *testing.T) {
	now := day(2026, 1, 2, 1, 0)
	f := newFixture(t, now, testConfig())
	n := history(t, f.st, "home", day(2025, 12, 1, 0, 0), day(2026, 1, 1, 0, 0))
	rep, err := f.log.BuildHistory(context.Background(), "home", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Messages != n || rep.Topics != 62 || rep.Written != 62 || rep.Pass.Titled != 62 || len(rep.Pass.Failed) != 0 {
		t.Fatalf("build report %+v pass %+v", rep, rep.Pass)
	}
	evs := f.events(t, "home", LevelEvent)
	days := f.events(t, "home", LevelDay)
	weeks := f.events(t, "home", LevelWeek)
	months := f.events(t, "home", LevelMonth)
	years := f.events(t, "home", LevelYear)
	if len(evs) != 62 || len(days) != 31 || len(months) != 1 || len(years) != 1 {
		t.Fatalf("records: %d events, %d days, %d months, %d years", len(evs), len(days), len(months), len(years))
	}
	// Weeks run Sunday to Saturday; the week of Dec 28 ends Jan 3, after now.
	if got := strings.Join(labels(weeks), " "); got != "20251130-20251206 20251207-20251213 20251214-20251220 20251221-20251227" {
		t.Fatalf("weeks %s", got)
	}
	if days[0].Label != "20251201" || months[0].Label != "2025年12月" || years[0].Label != "2025年" {
		t.Fatalf("labels %s %s %s", days[0].Label, months[0].Label, years[0].Label)
	}
	// Each record points at its children, and at the messages they span.
	byID := map[string]*Event{}
	for _, group := range [][]*Event{evs, days, weeks, months, years} {
		for _, e := range group {
			byID[e.ID] = e
		}
	}
	for _, d := range days {
		if len(d.Children) != 2 {
			t.Fatalf("day %s has %d children", d.Label, len(d.Children))
		}
		for _, c := range d.Children {
			if ch := byID[c]; ch == nil || ch.Level != LevelEvent || ch.Start.Before(d.Start) || !ch.Start.Before(d.End) {
				t.Fatalf("day %s child %s is not one of its events", d.Label, c)
			}
		}
		first := byID[d.Children[0]]
		if d.Source.FirstMessageID != first.Source.FirstMessageID || d.Source.LastMessageID != byID[d.Children[1]].Source.LastMessageID {
			t.Fatalf("day %s source %+v", d.Label, d.Source)
		}
	}
	if c := weeks[0].Children; len(c) != 6 || byID[c[0]].Label != "20251201" { // Nov 30 has no record
		t.Fatalf("first week's children %v", c)
	}
	if c := weeks[1].Children; len(c) != 7 {
		t.Fatalf("second week has %d children", len(c))
	}
	if c := months[0].Children; len(c) != 31 || byID[c[30]].Label != "20251231" {
		t.Fatalf("month children %d", len(c))
	}
	if c := years[0].Children; len(c) != 1 || c[0] != months[0].ID {
		t.Fatalf("year children %v", c)
	}
	if !strings.HasPrefix(years[0].Title, "year of 1: month of 31: day of 2: alice: topic 1201 10") {
		t.Fatalf("year title %q", years[0].Title)
	}
	if len(rep.Pass.Pending) != 0 {
		t.Fatalf("pending after the pass: %+v", rep.Pass.Pending)
	}

	// Importing the same history again adds nothing and summarises nothing.
	before := len(f.w.summaries)
	rep, err = f.log.BuildHistory(context.Background(), "home", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != 0 || rep.Kept != 62 || len(f.w.summaries) != before || len(f.events(t, "home", LevelEvent)) != 62 {
		t.Fatalf("second build: %+v, %d new summaries", rep, len(f.w.summaries)-before)
	}
}

func TestCatchUpAfterTenDaysDown(t *testing.T) {
	start := day(2026, 2, 1, 9, 0) // a Sunday
	f := newFixture(t, start, testConfig())
	// The daemon runs on Feb 1 and 2: a topic each day, rolled up nightly.
	f.say(t, "c", "amy", "sunday", start)
	f.process(t, day(2026, 2, 2, 0, 10))
	f.say(t, "c", "amy", "monday", day(2026, 2, 2, 9, 0))
	f.process(t, day(2026, 2, 3, 0, 10))
	if d := f.events(t, "c", LevelDay); len(d) != 2 {
		t.Fatalf("%d days before going down", len(d))
	}
	// Then the event log stops for ten days while messages keep arriving
	// every day (stored by the rest of the daemon): no pass runs.
	for i := 3; i <= 12; i++ {
		f.say(t, "c", "amy", fmt.Sprintf("day %d", i), day(2026, 2, i, 9, 0))
	}
	// Back on Feb 13 at noon: one pass catches up everything missed.
	rep := f.process(t, day(2026, 2, 13, 12, 0))
	if rep.Closed != 10 || rep.Titled != 10 {
		t.Fatalf("catch-up closed %d, titled %d", rep.Closed, rep.Titled)
	}
	days := f.events(t, "c", LevelDay)
	want := []string{}
	for i := 1; i <= 12; i++ {
		want = append(want, fmt.Sprintf("202602%02d", i))
	}
	if got := labels(days); !slices.Equal(got, want) {
		t.Fatalf("days %v, want %v", got, want)
	}
	if got := labels(f.events(t, "c", LevelWeek)); !slices.Equal(got, []string{"20260201-20260207"}) {
		t.Fatalf("weeks %v", got) // the week of Feb 8 ends on the 14th
	}
	if n := f.w.summaryCount(LevelDay); n != 12 {
		t.Fatalf("%d day summaries, want 12 (each day once)", n)
	}
	var weekPending *PendingRollup
	for _, p := range rep.Pending {
		if p.Level == LevelWeek {
			weekPending = &p
		}
	}
	if len(rep.Pending) != 0 || weekPending != nil {
		t.Fatalf("pending after catch-up: %+v", rep.Pending)
	}
	// A second pass at the same time has nothing to do.
	if rep := f.process(t, day(2026, 2, 13, 12, 5)); rep.Closed+rep.Titled+len(rep.Rollups) != 0 {
		t.Fatalf("second pass did work: %+v", rep)
	}
	// On Feb 15 the week of the 8th and the days 13–14 follow.
	rep = f.process(t, day(2026, 2, 15, 0, 10))
	if got := labels(f.events(t, "c", LevelWeek)); !slices.Equal(got, []string{"20260201-20260207", "20260208-20260214"}) {
		t.Fatalf("weeks %v, report %+v", got, rep)
	}
}

func TestFailingSummaryIsRetriedNeverSkipped(t *testing.T) {
	start := day(2026, 2, 1, 9, 0)
	f := newFixture(t, start, testConfig())
	f.say(t, "c", "amy", "one", start)
	f.say(t, "c", "amy", "two", day(2026, 2, 2, 9, 0))
	f.w.failSummary = 2
	at := day(2026, 2, 3, 0, 10)
	rep := f.process(t, at)
	if len(rep.Failed) != 1 || len(f.events(t, "c", LevelDay)) != 0 {
		t.Fatalf("first pass: %+v", rep)
	}
	// The failed day stays due, visible with its error; the next day waits
	// behind it rather than being summarised out of order or skipped.
	var p PendingRollup
	for _, x := range rep.Pending {
		if x.Level == LevelDay {
			p = x
		}
	}
	if p.Label != "20260201" || p.Due != 2 || p.Attempts != 1 || !strings.Contains(p.LastError, "summary writer down") || !p.NextTry.Equal(at.Add(time.Minute)) {
		t.Fatalf("pending day %+v", p)
	}
	if rep := f.process(t, at.Add(30*time.Second)); len(rep.Failed) != 0 || len(rep.Rollups) != 0 {
		t.Fatalf("retried before the backoff: %+v", rep)
	}
	f.process(t, at.Add(time.Minute)) // fails again: next try in 2 minutes
	if pend, _ := f.log.PendingRollups(at.Add(time.Minute)); pend[0].Attempts != 2 || !pend[0].NextTry.Equal(at.Add(3*time.Minute)) {
		t.Fatalf("second failure: %+v", pend)
	}
	rep = f.process(t, at.Add(3*time.Minute))
	if got := labels(f.events(t, "c", LevelDay)); !slices.Equal(got, []string{"20260201", "20260202"}) {
		t.Fatalf("days after the retry %v (report %+v)", got, rep)
	}
	for _, x := range rep.Pending {
		if x.Level == LevelDay {
			t.Fatalf("a day is still pending: %+v", x)
		}
	}
}

func TestLateRecordMakesItsPeriodDirty(t *testing.T) {
	start := day(2026, 2, 1, 9, 0)
	f := newFixture(t, start, testConfig())
	f.say(t, "c", "amy", "live", day(2026, 2, 10, 9, 0))
	f.process(t, day(2026, 2, 15, 0, 10))
	if got := labels(f.events(t, "c", LevelDay)); !slices.Equal(got, []string{"20260210"}) {
		t.Fatalf("days %v", got)
	}
	// History of Feb 10 (earlier that morning) and Feb 3 arrives later.
	err := f.st.AppendHistory(
		&store.Message{Channel: "c", Role: store.RoleUser, User: "amy", Text: "old news", Time: day(2026, 2, 3, 8, 0)},
		&store.Message{Channel: "c", Role: store.RoleUser, User: "amy", Text: "early", Time: day(2026, 2, 10, 6, 0)},
	)
	if err != nil {
		t.Fatal(err)
	}
	f.clk.Set(day(2026, 2, 15, 1, 0))
	if _, err := f.log.BuildHistory(context.Background(), "c", time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	days := f.events(t, "c", LevelDay)
	if got := labels(days); !slices.Equal(got, []string{"20260203", "20260210"}) || len(days[1].Children) != 2 {
		t.Fatalf("days %v, Feb 10 children %v", got, days[1].Children)
	}
	weeks := f.events(t, "c", LevelWeek)
	if got := labels(weeks); !slices.Equal(got, []string{"20260201-20260207", "20260208-20260214"}) {
		t.Fatalf("weeks %v", got)
	}
}

// TestAnOldHistoryRollsUpWithoutWalkingEveryEmptyDay: a history imported
// from years back has its records rolled up, and the marks reach today
// in a handful of writes, not one synced write for each empty day, week,
// month and year since (1,619 here; a test import took 20–50 s).
func TestAnOldHistoryRollsUpWithoutWalkingEveryEmptyDay(t *testing.T) {
	now := day(2026, 11, 20, 12, 0)
	f := newFixture(t, now, testConfig())
	history(t, f.st, "old", day(2023, 3, 1, 0, 0), day(2023, 3, 3, 0, 0))
	history(t, f.st, "old", day(2024, 8, 10, 0, 0), day(2024, 8, 12, 0, 0))
	j := f.st.Journal()
	before := j.Last()
	if _, err := f.log.BuildHistory(context.Background(), "old", time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	// Every write of the log is told on the journal as RecordsChanged.
	evs, err := j.Since(before, journal.Filter{Kinds: []journal.Kind{journal.RecordsChanged}}, 100000)
	if err != nil {
		t.Fatal(err)
	}
	writes := len(evs)
	t.Logf("%d writes", writes)
	if writes > 150 {
		t.Fatalf("%d writes to roll up 4 days of history 3 years back", writes)
	}
	for _, c := range []struct {
		level Level
		want  []string
	}{
		{LevelDay, []string{"20230301", "20230302", "20240810", "20240811"}},
		{LevelWeek, []string{"20230226-20230304", "20240804-20240810", "20240811-20240817"}},
		{LevelMonth, []string{"2023年3月", "2024年8月"}},
		{LevelYear, []string{"2023年", "2024年"}},
	} {
		if got := labels(f.events(t, "old", c.level)); !slices.Equal(got, c.want) {
			t.Errorf("%s records %v, want %v", c.level, got, c.want)
		}
	}
	// Nothing is left due: every empty period up to today is passed.
	rep := f.process(t, now.Add(time.Minute))
	if len(rep.Pending) != 0 || len(rep.Rollups) != 0 {
		t.Fatalf("after the build: pending %+v, rollups %v", rep.Pending, rep.Rollups)
	}
	// A topic today is summarised when its day ends, as ever.
	f.say(t, "old", "amy", "back after two years", now.Add(2*time.Minute))
	f.process(t, day(2026, 11, 21, 0, 10))
	if days := labels(f.events(t, "old", LevelDay)); days[len(days)-1] != "20261120" {
		t.Fatalf("days %v", days)
	}
}
