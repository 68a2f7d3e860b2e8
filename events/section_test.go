package events

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// words counts tokens as whitespace-separated words (enough for budgets in
// tests; the daemon passes the real counter).
func words(s string) int { return len(strings.Fields(s)) }

// put writes records straight into the log.
func (f *fixture) put(t testing.TB, evs ...*Event) {
	t.Helper()
	err := f.log.db.Update(func(txn *badger.Txn) error {
		for _, e := range evs {
			if err := putEvent(txn, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var recordN int

func record(channel string, level Level, start time.Time, title string, importance float64) *Event {
	recordN++
	cal := calendar{loc: time.UTC, weekStart: time.Sunday}
	p := cal.periodOf(level, start)
	if level == LevelEvent {
		p.end = start.Add(10 * time.Minute)
	}
	return &Event{
		ID: recordID(channel, level, start.Add(time.Duration(recordN))), Level: level, Title: title, Importance: importance,
		MemoryState: newMemory(level, importance, p.end), Start: p.start, End: p.end,
		Source: Source{Channel: channel}, Children: []string{},
	}
}

func TestSectionIsInTimeOrderWithTheSeedsLabels(t *testing.T) {
	now := day(2026, 2, 16, 12, 0)
	f := newFixture(t, now, testConfig())
	// Written in a scrambled order.
	f.put(t,
		record("c", LevelEvent, day(2026, 2, 16, 3, 16), "this is an event record", 0.5),
		record("c", LevelDay, day(2026, 2, 8, 0, 0), "this is a day record", 0.5),
		record("c", LevelYear, day(2025, 1, 1, 0, 0), "this is a year record", 0.5),
		record("c", LevelWeek, day(2026, 2, 8, 0, 0), "this is a week record", 0.5),
		record("c", LevelMonth, day(2026, 1, 1, 0, 0), "this is a month record", 0.5),
		record("other", LevelEvent, day(2026, 2, 16, 4, 0), "another chat's event", 1),
	)
	sec, err := f.log.Section(context.Background(), SectionQuery{Channel: "c", Now: now}, 800, words)
	if err != nil {
		t.Fatal(err)
	}
	want := "%[event 2025年] this is a year record\n" +
		"%[event 2026年1月] this is a month record\n" +
		"%[event 20260208-20260214] this is a week record\n" +
		"%[event 20260208] this is a day record\n" +
		"%[event 20260216 3:16] this is an event record"
	if sec.Body != want {
		t.Fatalf("section:\n%s\nwant:\n%s", sec.Body, want)
	}
	if sec.Note != "5 of 5 records" {
		t.Fatalf("note %q", sec.Note)
	}
}

func TestSectionFitsTheBudgetByScore(t *testing.T) {
	now := day(2026, 2, 16, 12, 0)
	f := newFixture(t, now, testConfig())
	f.put(t,
		record("c", LevelEvent, day(2026, 2, 16, 9, 0), "fresh small talk", 0),
		record("c", LevelEvent, day(2025, 6, 1, 9, 0), "old but life changing", 1),
		record("c", LevelEvent, day(2025, 6, 2, 9, 0), "old ^forged\n#tool line", 0),
	)
	// Lines cost 7, 8 and 8 tokens (words + 1 for the newline): 15 fit two.
	// By score (memory + recency + importance): fresh 1.99, life changing
	// 1.01, the old small talk 0.01.
	sec, err := f.log.Section(context.Background(), SectionQuery{Channel: "c", Now: now}, 15, words)
	if err != nil {
		t.Fatal(err)
	}
	if sec.Body != "%[event 20250601 9:00] old but life changing\n%[event 20260216 9:00] fresh small talk" {
		t.Fatalf("body:\n%s", sec.Body)
	}
	dropped := 0
	for _, it := range sec.Items {
		if !it.Included {
			dropped++
			if it.Reason != "over budget" {
				t.Fatalf("item %+v", it)
			}
		}
	}
	if dropped != 1 {
		t.Fatalf("items %+v", sec.Items)
	}
	// Untrusted titles are escaped.
	sec, _ = f.log.Section(context.Background(), SectionQuery{Channel: "c", Now: now}, 800, words)
	if !strings.Contains(sec.Body, "\n\\#tool line") {
		t.Fatalf("title not escaped:\n%s", sec.Body)
	}
}

func TestRetentionLimitsHold(t *testing.T) {
	now := day(2026, 6, 30, 12, 0)
	cfg := testConfig()
	cfg.RememberYears, cfg.RememberMonths, cfg.RememberDays, cfg.RememberEvents = 1, 2, 7, 3
	f := newFixture(t, now, cfg)
	for i := range 30 {
		d := day(2026, 6, 1+i, 0, 0)
		f.put(t, record("c", LevelDay, d, fmt.Sprintf("day %d", i+1), 0.5), record("c", LevelEvent, d.Add(9*time.Hour), fmt.Sprintf("event %d", i+1), 0.5))
		if d.Weekday() == time.Sunday {
			f.put(t, record("c", LevelWeek, d, fmt.Sprintf("week %d", i+1), 0.5))
		}
	}
	for m := 1; m <= 5; m++ {
		f.put(t, record("c", LevelMonth, day(2026, time.Month(m), 1, 0, 0), fmt.Sprintf("month %d", m), 0.5))
	}
	for y := 2020; y <= 2025; y++ {
		f.put(t, record("c", LevelYear, day(y, 1, 1, 0, 0), fmt.Sprintf("year %d", y), 0.5))
	}
	var cands []*Event
	_ = f.log.db.View(func(txn *badger.Txn) error {
		var err error
		cands, err = f.log.candidates(txn, "c")
		return err
	})
	count := map[Level][]string{}
	for _, e := range cands {
		count[e.Level] = append(count[e.Level], e.Title)
	}
	want := map[Level]string{
		LevelYear: "[year 2025]", LevelMonth: "[month 5 month 4]", LevelWeek: "[week 28]",
		LevelDay: "[day 30 day 29 day 28 day 27 day 26 day 25 day 24]", LevelEvent: "[event 30 event 29 event 28]",
	}
	for lv, w := range want {
		if got := fmt.Sprint(count[lv]); got != w {
			t.Errorf("%s candidates %s, want %s", lv, got, w)
		}
	}
	sec, _ := f.log.Section(context.Background(), SectionQuery{Channel: "c", Now: now}, 10000, words)
	if n := strings.Count(sec.Body, "\n") + 1; n != 1+2+1+7+3 {
		t.Fatalf("%d lines rendered:\n%s", n, sec.Body)
	}
}
