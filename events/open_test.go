package events

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
)

// withRanges numbers the fixture's runs as the daemon does: by recall's
// history numbering.
func (f *fixture) withRanges() {
	f.log.ranges = func(ctx context.Context, channel string, runs []Run) ([][]string, error) {
		in := make([]recall.Run, len(runs))
		for i, r := range runs {
			in[i] = recall.Run{First: r.First, Last: r.Last}
		}
		rs, err := recall.HistoryRanges(ctx, f.st, channel, in)
		out := make([][]string, len(rs))
		for i, r := range rs {
			for _, x := range r {
				out[i] = append(out[i], x.String())
			}
		}
		return out, err
	}
}

var historyRef = regexp.MustCompile(`%\[(history/[^\]]+)\] (message \d+(?: ~ message \d+)?)`)

// openRange opens a history reference an opened record showed, as the
// open tool does.
func (f *fixture) openRange(t *testing.T, r packets.Reader, ref string) string {
	t.Helper()
	m := historyRef.FindStringSubmatch(ref)
	if m == nil {
		t.Fatalf("%q is not a history reference", ref)
	}
	out, err := recall.OpenHistory(f.st)(context.Background(), r, m[1], m[2])
	if err != nil {
		t.Fatalf("open %s: %v", ref, err)
	}
	return out
}

func TestOpenRecordGivesItsSummaryAndMessages(t *testing.T) {
	ctx := context.Background()
	t0 := day(2026, 2, 16, 3, 16)
	f := newFixture(t, t0, testConfig())
	f.withRanges()
	f.say(t, "home", "kemo", "hello from sunday", day(2026, 2, 15, 10, 0))
	f.say(t, "home", "kemo", "RAG or KAG?", t0)
	// A tool result between the lines is not one of the numbered messages.
	if err := f.st.Append(t0.Add(30*time.Second), &store.Message{Channel: "home", Role: store.RoleTool, ToolName: "recall", Text: "TOOL-OUTPUT"}); err != nil {
		t.Fatal(err)
	}
	f.say(t, "home", "青蓝", "KAG is newer", t0.Add(time.Minute))
	f.say(t, "home", "kemo", "thanks", t0.Add(20*time.Minute))
	f.say(t, "home", "roki", "project tonight?", day(2026, 2, 16, 9, 40))
	f.say(t, "home", "青蓝", "sure", day(2026, 2, 16, 9, 41))
	f.say(t, "other", "zed", "another chat", day(2026, 2, 16, 9, 0))
	f.process(t, day(2026, 3, 2, 1, 0)) // topics, days, the week, the month

	owner := ownerReader("home")
	open := func(r packets.Reader, label string) string {
		t.Helper()
		out, err := f.log.Open(ctx, r, RefEvent+label, "")
		if err != nil {
			t.Fatalf("open %s: %v", label, err)
		}
		return out
	}
	// A topic: its summary and the one range of its messages, which opens.
	topic := open(owner, "20260216 3:16")
	for _, want := range []string{"%[event 20260216 3:16] in home: a topic", "summary: kemo: RAG or KAG?", "%[history/home/2026-02-16] message 2 ~ message 4"} {
		if !strings.Contains(topic, want) {
			t.Fatalf("opened topic lacks %q:\n%s", want, topic)
		}
	}
	words := f.openRange(t, owner, historyRef.FindString(topic))
	if !strings.Contains(words, "RAG or KAG?") || !strings.Contains(words, "KAG is newer") || !strings.Contains(words, "thanks") ||
		strings.Contains(words, "hello from sunday") || strings.Contains(words, "project tonight") || strings.Contains(words, "TOOL-OUTPUT") {
		t.Fatalf("the topic's range opened to:\n%s", words)
	}
	// A day: its summary and its topics' ranges, each under the topic's
	// reference.
	dayText := open(owner, "20260216")
	for _, want := range []string{"in home: a day", "summary: day of 2: kemo: RAG or KAG? | roki: project tonight?",
		"%[event 20260216 3:16]: %[history/home/2026-02-16] message 2 ~ message 4",
		"%[event 20260216 9:40]: %[history/home/2026-02-16] message 5 ~ message 6"} {
		if !strings.Contains(dayText, want) {
			t.Fatalf("opened day lacks %q:\n%s", want, dayText)
		}
	}
	if words := f.openRange(t, owner, historyRef.FindAllString(dayText, -1)[1]); !strings.Contains(words, "project tonight?") || !strings.Contains(words, "sure") {
		t.Fatalf("the day's second range opened to:\n%s", words)
	}
	// A week and a month: their days' ranges.
	for _, label := range []string{"20260215-20260221", "2026年2月"} {
		out := open(owner, label)
		for _, want := range []string{"%[event 20260215]: %[history/home/2026-02-15] message 1", "%[event 20260216]: %[history/home/2026-02-16] message 2 ~ message 6"} {
			if !strings.Contains(out, want) {
				t.Fatalf("opened %s lacks %q:\n%s", label, want, out)
			}
		}
	}
	// The runs were kept when the records were made.
	days := f.events(t, "home", LevelDay)
	if len(days) != 2 || len(days[1].Runs) != 2 || days[1].Runs[0].Label != "20260216 3:16" {
		t.Fatalf("day records' runs: %+v", days)
	}
	// A record written before runs were kept opens the same: its runs are
	// derived from its children (a rollup) or its source (a topic).
	for _, label := range []string{"20260216", "20260216 3:16", "2026年2月"} {
		before := open(owner, label)
		f.clearRuns(t, "home", label)
		if after := open(owner, label); after != before {
			t.Fatalf("%s without stored runs opens as\n%s\nwant\n%s", label, after, before)
		}
	}

	// Whoever may read the records but not the chat log is told so.
	recordsOnly := packets.Reader{Channel: "home", Perm: &packets.Permission{Infos: []string{"events:own"}}}
	if out := open(recordsOnly, "20260216 3:16"); !strings.Contains(out, "its messages: not open to you") || strings.Contains(out, "%[history/") {
		t.Fatalf("a reader without the history got:\n%s", out)
	}
	// A stranger in a group opens nothing of the owner's chat.
	stranger := packets.Reader{Channel: "qq:group:1", Perm: &packets.Permission{Infos: []string{"*:own", "*:public"}}}
	if out, err := f.log.Open(ctx, stranger, RefEvent+"20260216", ""); !errors.Is(err, errNoRef) {
		t.Fatalf("a stranger opened the owner's day: %q %v", out, err)
	}
}

// clearRuns rewrites a channel's record of label without its runs, as
// records were written before runs were kept.
func (f *fixture) clearRuns(t *testing.T, channel, label string) {
	t.Helper()
	for _, e := range f.events(t, channel, levelOfLabel(label)) {
		if e.Label != label {
			continue
		}
		e.Runs = nil
		if err := f.log.db.Update(func(txn *badger.Txn) error { return putEvent(txn, e) }); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no record %s", label)
}

func TestOpenRecordWithoutNumberingShowsIDs(t *testing.T) {
	t0 := day(2026, 2, 16, 3, 16)
	f := newFixture(t, t0, testConfig())
	a := f.say(t, "home", "kemo", "RAG or KAG?", t0)
	b := f.say(t, "home", "kemo", "thanks", t0.Add(time.Minute))
	f.process(t, t0.Add(time.Hour))
	out, err := f.log.Open(context.Background(), ownerReader("home"), RefEvent+"20260216 3:16", "")
	if err != nil || !strings.Contains(out, "messages "+a.ID+" ~ "+b.ID) {
		t.Fatalf("open: %v\n%s", err, out)
	}
}

func TestLevelOfLabel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		label string
		want  Level
	}{
		{"year", "2025年", LevelYear},
		{"month", "2026年1月", LevelMonth},
		{"week", "20260208-20260214", LevelWeek},
		{"day", "20260208", LevelDay},
		{"topic", "20260216 3:16", LevelEvent},
		{"unknown", "yesterday", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := levelOfLabel(tc.label); got != tc.want {
				t.Fatalf("levelOfLabel(%q) = %q, want %q", tc.label, got, tc.want)
			}
		})
	}
}

func TestParseLabelReadsWhatLabelWrites(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	for _, loc := range []*time.Location{time.UTC, shanghai} {
		cal := calendar{loc: loc, weekStart: time.Monday}
		for _, at := range []time.Time{time.Date(2026, 2, 16, 3, 16, 42, 0, loc), time.Date(1999, 12, 31, 23, 59, 0, 0, loc), time.Date(2026, 1, 1, 0, 0, 0, 0, loc)} {
			for _, level := range Levels {
				start := cal.periodOf(level, at).start
				label := cal.label(level, start)
				got, from, to, ok := cal.parseLabel(label)
				if !ok || got != level || start.Before(from) || !start.Before(to) {
					t.Errorf("%s %s: parseLabel(%q) = %s [%s, %s) %v, want %s around %s", loc, level, label, got, from, to, ok, level, start)
				}
			}
		}
	}
}

func FuzzParseLabel(f *testing.F) {
	for _, s := range []string{"20260216 3:16", "20260216", "20260208-20260214", "2026年1月", "2025年", "-", "年月", "2026年13月", "99999999 99:99", ""} {
		f.Add(s)
	}
	cal := calendar{loc: time.UTC, weekStart: time.Sunday}
	f.Fuzz(func(t *testing.T, s string) {
		level, from, to, ok := cal.parseLabel(s)
		if ok && (level == "" || !from.Before(to)) {
			t.Fatalf("parseLabel(%q) = %q [%s, %s)", s, level, from, to)
		}
	})
}
