package events

import (
	"math"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/packets"
)

func TestRecallReviewsTopicsByTheFormula(t *testing.T) {
	t0 := day(2026, 2, 16, 3, 16)
	f := newFixture(t, t0, testConfig())
	a := f.say(t, "home", "kemo", "RAG or KAG?", t0)
	f.say(t, "home", "青蓝", "KAG is newer", t0.Add(time.Minute))
	f.say(t, "home", "roki", "project tonight?", t0.Add(3*time.Hour))
	f.say(t, "group", "amy", "hello", t0.Add(10*time.Minute))
	f.process(t, t0.Add(5*time.Hour))
	evs := f.events(t, "home", LevelEvent)
	if len(evs) != 2 {
		t.Fatalf("%d topics", len(evs))
	}
	// A passage at t0+30s belongs to the first topic only; one spanning
	// both topics' times to both; another channel's times to neither.
	ids, err := f.log.TopicsAt("home", []time.Time{a.Time.Add(30 * time.Second)})
	if err != nil || len(ids) != 1 || ids[0] != evs[0].ID {
		t.Fatalf("topics at t0: %v %v", ids, err)
	}
	if ids, _ := f.log.TopicsAt("home", []time.Time{t0, t0.Add(3 * time.Hour)}); len(ids) != 2 {
		t.Fatalf("topics of a passage over both: %v", ids)
	}
	if ids, _ := f.log.TopicsAt("home", []time.Time{t0.Add(time.Hour)}); len(ids) != 0 {
		t.Fatalf("a time between topics belongs to none: %v", ids)
	}

	// Ten days on, R has fallen; a review with D = 0.7 grows S by the law.
	later := t0.Add(10 * 24 * time.Hour)
	before := evs[0].MemoryState
	r := before.Retrievability(later)
	done, err := f.log.Review([]string{evs[0].ID, evs[0].ID, "0190a0a0-0000-7000-8000-000000000000", "nonsense"}, 0.7, later)
	if err != nil || len(done) != 1 {
		t.Fatalf("reviewed %v, %v", done, err)
	}
	after, err := f.log.Event(evs[0].ID, later)
	if err != nil {
		t.Fatal(err)
	}
	want := before.S * (1 + Gain*math.Exp(-0.7)*(1-r))
	if math.Abs(after.MemoryState.S-want) > 1e-9 || !after.MemoryState.LastT.Equal(later) || after.MemoryState.D != 0.7 || after.MemoryState.R != 1 {
		t.Fatalf("S %g → %+v, want S %g", before.S, after.MemoryState, want)
	}
	// Recalled again at once, R is 1: S stays.
	f.log.Review([]string{evs[0].ID}, 0.7, later)
	if again, _ := f.log.Event(evs[0].ID, later); again.MemoryState.S != after.MemoryState.S {
		t.Fatalf("an immediate second review grew S: %g → %g", after.MemoryState.S, again.MemoryState.S)
	}

	f.process(t, later) // the days' rollups are due
	titled, err := f.log.Titled(later)
	if err != nil {
		t.Fatal(err)
	}
	levels := map[Level]int{}
	for _, e := range titled {
		if e.Title == "" || e.Label == "" {
			t.Fatalf("untitled or unlabelled record listed: %+v", e)
		}
		levels[e.Level]++
	}
	if levels[LevelEvent] != 3 || levels[LevelDay] == 0 {
		t.Fatalf("titled records by level: %v", levels)
	}
}

func TestChangesAreToldOnTheJournal(t *testing.T) {
	t0 := day(2026, 2, 16, 3, 16)
	f := newFixture(t, t0, testConfig())
	j := f.log.st.Journal()
	since := j.Last()
	if _, err := f.log.CreateTheory("ideas", "line one\nline two", nil, packets.Scope{Owner: true}, t0); err != nil {
		t.Fatal(err)
	}
	evs, err := j.Since(since, journal.Filter{Kinds: []journal.Kind{journal.RecordsChanged}}, 0)
	if err != nil || len(evs) == 0 {
		t.Fatalf("no change was told: %v %v", evs, err)
	}
}
