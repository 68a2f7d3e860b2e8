package recall

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
)

func TestMatchRecordsFindsTheTheoriesATopicTouches(t *testing.T) {
	recs := &fakeRecords{}
	recs.set(
		packets.Record{Kind: packets.RecordTheory, ID: "th-zebra", Channel: "home", OwnerOnly: true, Source: "theory zebra migration", Text: "zebras walk north in june, following the rain", Time: t0},
		packets.Record{Kind: packets.RecordTheory, ID: "th-tea", Source: "theory brewing tea", Text: "green tea is best brewed at 80 degrees, never boiling", Time: t0},
		packets.Record{Kind: packets.RecordTheory, ID: "th-mascot", Channel: "qq:group:1", Source: "theory the group's mascot", Text: "the group's mascot is a zebra called stripes", Time: t0},
		packets.Record{Kind: packets.RecordEvent, ID: "ev-1", Channel: "home", Source: "event 20250601", Text: "zebras walk north, we watched them", Time: t0},
		packets.Record{Kind: packets.RecordTheory, ID: "th-june", Channel: "home", OwnerOnly: true, Source: "theory rainy season", Text: "the rains come in june and stay all summer", Time: t0},
	)
	for _, weight := range []struct {
		name string
		w    float64
	}{{"words only", hybridOff}, {"hybrid", 0}} {
		t.Run(weight.name, func(t *testing.T) {
			x, _ := newTestIndex(t, Options{Records: recs, RecordsDelay: -1, VectorWeight: weight.w})
			syncIndex(t, x)
			ctx := context.Background()
			ids := func(q MatchQuery) []string {
				t.Helper()
				q.Kind = packets.RecordTheory
				ms, err := x.MatchRecords(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, m := range ms {
					if m.Kind != packets.RecordTheory || m.Score <= 0 || len(m.Shared) < DefaultMatchShared {
						t.Fatalf("match %+v", m)
					}
					out = append(out, m.ID)
				}
				return out
			}
			talk := "did you see? the zebras walk north again\nyes, they always do when the rain starts"
			for _, tc := range []struct {
				name string
				q    MatchQuery
				want []string
			}{
				{"the owner in private gets the owner's theory", MatchQuery{Text: talk, Channel: "home", Owner: true}, []string{"th-zebra"}},
				{"a guest in the same chat does not", MatchQuery{Text: talk, Channel: "home"}, nil},
				{"a group never sees the owner's theory", MatchQuery{Text: talk, Channel: "qq:group:1", Owner: true}, nil},
				{"a group's own theory comes to its topic", MatchQuery{Text: "our zebra mascot stripes is back", Channel: "qq:group:1"}, []string{"th-mascot"}},
				{"a public theory comes anywhere", MatchQuery{Text: "how hot should the water be for green tea?", Channel: "qq:group:1"}, []string{"th-tea"}},
				{"one shared word is not a match", MatchQuery{Text: "what are you doing in june", Channel: "home", Owner: true}, nil},
				{"unrelated talk brings nothing", MatchQuery{Text: "my laptop battery died", Channel: "home", Owner: true}, nil},
				{"empty talk brings nothing", MatchQuery{Text: "  ", Channel: "home", Owner: true}, nil},
			} {
				if got := ids(tc.q); !slices.Equal(got, tc.want) {
					t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
				}
			}
			ms, err := x.MatchRecords(ctx, MatchQuery{Text: talk, Kind: packets.RecordTheory, Channel: "home", Owner: true})
			if err != nil || len(ms) != 1 || ms[0].Source != "theory zebra migration" || !slices.Contains(ms[0].Shared, "zebra") || !slices.Contains(ms[0].Shared, "north") {
				t.Fatalf("match %+v %v", ms, err)
			}
		})
	}
}

func TestHistoryRangesOpen(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 2, 16, 8, 0, 0, 0, time.UTC)
	var ids []string // of the counted messages, in order
	say := func(role store.Role, text string) {
		m := &store.Message{Channel: "home", Role: role, User: "kemo", Text: text, Time: at}
		if err := st.Append(at, m); err != nil {
			t.Fatal(err)
		}
		if role != store.RoleTool {
			ids = append(ids, m.ID)
		}
		at = at.Add(time.Minute)
	}
	for i := range 450 {
		say(store.RoleUser, fmt.Sprintf("line %d", i+1))
		if i%100 == 0 {
			say(store.RoleTool, "a tool's result is not numbered")
		}
	}
	runs := []Run{{First: ids[0], Last: ids[449]}, {First: ids[9], Last: ids[9]}, {First: ids[300], Last: ids[302]}, {First: "ffffffff-0000-0000-0000-000000000000", Last: "ffffffff-0000-0000-0000-000000000001"}}
	got, err := HistoryRanges(context.Background(), st, "home", runs)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"%[history/home/2026-02-16] message 1 ~ message 200", "%[history/home/2026-02-16] message 201 ~ message 400", "%[history/home/2026-02-16] message 401 ~ message 450"},
		{"%[history/home/2026-02-16] message 10"},
		{"%[history/home/2026-02-16] message 301 ~ message 303"},
		nil,
	}
	for i := range want {
		var s []string
		for _, r := range got[i] {
			s = append(s, r.String())
		}
		if !slices.Equal(s, want[i]) {
			t.Fatalf("run %d: %q, want %q", i, s, want[i])
		}
	}
	// Every range opens to exactly its messages.
	owner := packets.Reader{Channel: "home", Owner: true, Private: true, Perm: &packets.Permission{Infos: []string{"**"}}}
	open := OpenHistory(st)
	for _, r := range got[0] {
		out, err := open(context.Background(), owner, r.Ref, r.Location)
		if err != nil {
			t.Fatalf("open %s: %v", r, err)
		}
		if n := strings.Count(out, "\n") + 1; n != r.Messages {
			t.Fatalf("%s opened %d messages, want %d", r, n, r.Messages)
		}
	}
	out, _ := open(context.Background(), owner, got[2][0].Ref, got[2][0].Location)
	if !strings.HasPrefix(out, "message301:kemo") || !strings.Contains(out, "line 301") || !strings.Contains(out, "line 303") || strings.Contains(out, "line 304") {
		t.Fatalf("message 301 ~ 303 opened to:\n%s", out)
	}
}

// The index numbers history as reading the channel does, once it holds
// every message; before that it reads the channel.
func TestIndexNumbersHistoryAsAScanDoes(t *testing.T) {
	x, st := newTestIndex(t, Options{})
	at := time.Date(2026, 2, 16, 8, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 520 {
		role := store.RoleUser
		switch i % 7 {
		case 3:
			role = store.RoleTool
		case 5:
			role = store.RoleAssistant
		}
		m := &store.Message{Channel: "home", Role: role, User: "kemo", Text: fmt.Sprintf("line %d", i), Time: at}
		if i%50 == 9 {
			m.Empty, m.Text = true, ""
		}
		if err := st.Append(at, m, &store.Message{Channel: "other", Role: store.RoleUser, Text: "noise", Time: at}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
		at = at.Add(7 * time.Hour)
	}
	runs := []Run{{First: ids[0], Last: ids[519]}, {First: ids[3], Last: ids[3]}, {First: ids[100], Last: ids[140]}, {First: "nonsense", Last: ids[2]}}
	ctx := context.Background()
	owner := packets.Reader{Channel: "home", Owner: true, Private: true, Perm: &packets.Permission{Infos: []string{"**"}}}
	compare := func(stage string) {
		t.Helper()
		want, err := HistoryRanges(ctx, st, "home", runs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.HistoryRanges(ctx, "home", runs)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: the index numbers\n%v\nreading the channel numbers\n%v", stage, got, want)
		}
		for _, loc := range []string{"message 1", "message 2 ~ message 9", "message 150 ~ message 260", "message 399", "message 400 ~ message 420", "message 9999"} {
			w, werr := OpenHistory(st)(ctx, owner, "history/home/2026-02-16", loc)
			g, gerr := x.OpenHistory()(ctx, owner, "history/home/2026-02-16", loc)
			if g != w || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("%s: %s opens through the index to\n%q %v\nby reading to\n%q %v", stage, loc, g, gerr, w, werr)
			}
		}
	}
	compare("before indexing")
	syncIndex(t, x)
	if !x.caughtUp() {
		t.Fatal("the index is not caught up after a sync")
	}
	compare("indexed")
	if got, _ := x.HistoryRanges(ctx, "home", runs[:1]); len(got[0]) < 2 {
		t.Fatalf("a run of over %d messages is one range: %v", maxOpen, got)
	}
}

// A message withdrawn after it was indexed keeps its number in the index
// until the next start, so the numbers given out before still open what
// they named; its words never show.
func TestWithdrawnMessageKeepsItsNumberUntilRestart(t *testing.T) {
	x, st := newTestIndex(t, Options{})
	at := time.Date(2026, 2, 16, 8, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 6 {
		m := &store.Message{Channel: "home", Role: store.RoleUser, User: "kemo", Text: fmt.Sprintf("line %d", i+1), Time: at, ExternalID: fmt.Sprint("q", i+1)}
		if err := st.Append(at, m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
		at = at.Add(time.Minute)
	}
	syncIndex(t, x)
	ctx := context.Background()
	before, err := x.HistoryRanges(ctx, "home", []Run{{First: ids[3], Last: ids[5]}})
	if err != nil || fmt.Sprint(before) != fmt.Sprint([][]Range{{{Ref: "history/home/2026-02-16", Location: "message 4 ~ message 6", Messages: 3, from: 4}}}) {
		t.Fatalf("ranges %v %v", before, err)
	}
	if _, err := st.MarkRecalled("home", "q2", at); err != nil {
		t.Fatal(err)
	}
	owner := packets.Reader{Channel: "home", Owner: true, Private: true, Perm: &packets.Permission{Infos: []string{"**"}}}
	out, err := x.OpenHistory()(ctx, owner, "history/home/2026-02-16", "message 1 ~ message 6")
	if err != nil || strings.Contains(out, "line 2") || !strings.Contains(out, "message4:kemo") || !strings.Contains(out, "line 4") || !strings.Contains(out, "message6:kemo [2026-02-16 08:05]: line 6") {
		t.Fatalf("after the withdrawal, message 1 ~ 6 opens to\n%s\n%v", out, err)
	}
	if _, err := x.OpenHistory()(ctx, owner, "history/home/2026-02-16", "message 2"); err == nil || !strings.Contains(err.Error(), "withdrawn") {
		t.Fatalf("the withdrawn message alone: %v", err)
	}
	after, _ := x.HistoryRanges(ctx, "home", []Run{{First: ids[3], Last: ids[5]}})
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("ranges moved from %v to %v", before, after)
	}
	// A new start reads the channel without it: everything after moves up one.
	y, _ := newTestIndex(t, Options{Store: st})
	syncIndex(t, y)
	if got, _ := y.HistoryRanges(ctx, "home", []Run{{First: ids[3], Last: ids[5]}}); got[0][0].Location != "message 3 ~ message 5" {
		t.Fatalf("after a restart: %v", got)
	}
}

// A theory written a moment before a turn matches that turn's topic: the
// records changed since the index read them (journal.RecordsChanged), so
// MatchRecords indexes them first, without waiting for Run's rebuild.
func TestMatchRecordsSeesATheoryWrittenJustNow(t *testing.T) {
	recs := &fakeRecords{}
	recs.set(packets.Record{Kind: packets.RecordTheory, ID: "th-tea", Source: "theory brewing tea", Text: "green tea is best brewed at 80 degrees, never boiling", Time: t0})
	x, st := newTestIndex(t, Options{Records: recs, RecordsDelay: -1, VectorWeight: hybridOff})
	syncIndex(t, x)
	q := MatchQuery{Text: "the zebras walk north again when the rain starts", Kind: packets.RecordTheory, Channel: "home", Owner: true}
	if ms, err := x.MatchRecords(context.Background(), q); err != nil || len(ms) != 0 {
		t.Fatalf("before: %+v %v", ms, err)
	}
	reads := recs.reads
	// Nothing changed: no rebuild at match time.
	x.MatchRecords(context.Background(), q)
	if recs.reads != reads {
		t.Fatalf("the records were read again with nothing changed")
	}
	recs.set(
		packets.Record{Kind: packets.RecordTheory, ID: "th-tea", Source: "theory brewing tea", Text: "green tea is best brewed at 80 degrees, never boiling", Time: t0},
		packets.Record{Kind: packets.RecordTheory, ID: "th-zebra", Channel: "home", OwnerOnly: true, Source: "theory zebra migration", Text: "zebras walk north in june, following the rain", Time: t0},
	)
	st.Journal().Post(journal.New(journal.RecordsChanged, "", nil))
	ms, err := x.MatchRecords(context.Background(), q)
	if err != nil || len(ms) != 1 || ms[0].ID != "th-zebra" {
		t.Fatalf("a theory written just now is not matched: %+v %v", ms, err)
	}
}
