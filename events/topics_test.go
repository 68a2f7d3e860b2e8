package events

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

func TestTopicsCloseOnSilence(t *testing.T) {
	t0 := day(2026, 2, 16, 3, 16)
	f := newFixture(t, t0, testConfig()) // topic_silence 30m
	a := f.say(t, "home", "kemo", "RAG or KAG?", t0)
	f.say(t, "home", "青蓝", "KAG is newer", t0.Add(time.Minute))
	b := f.say(t, "home", "kemo", "thanks", t0.Add(20*time.Minute))
	// 29 minutes after the last message the topic is still open.
	if rep := f.process(t, t0.Add(49*time.Minute)); rep.Closed != 0 {
		t.Fatalf("closed %d topics before the silence passed", rep.Closed)
	}
	// A message after a long pause starts a new topic; the old one closes.
	c := f.say(t, "home", "roki", "project tonight?", t0.Add(3*time.Hour))
	rep := f.process(t, t0.Add(3*time.Hour+time.Minute))
	if rep.Closed != 1 || rep.Titled != 1 {
		t.Fatalf("report %+v, want 1 closed and titled", rep)
	}
	evs := f.events(t, "home", LevelEvent)
	if len(evs) != 1 {
		t.Fatalf("%d records, want 1", len(evs))
	}
	e := evs[0]
	if e.Source.FirstMessageID != a.ID || e.Source.LastMessageID != b.ID || e.Messages != 3 || e.ClosedBy != "silence" ||
		!e.Start.Equal(t0) || !e.End.Equal(t0.Add(20*time.Minute)) || e.Label != "20260216 3:16" || e.Title != "kemo: RAG or KAG?" {
		t.Fatalf("record = %+v", e)
	}
	if len(e.Speakers) != 1 || e.Speakers[0] != "kemo" || e.Pending != nil {
		t.Fatalf("speakers %v pending %+v", e.Speakers, e.Pending)
	}
	// S is set when the record is written: base 1 day × (1 + 5·0.5).
	if e.MemoryState.S != 3.5 || e.Importance != 0.5 {
		t.Fatalf("memory %+v importance %v", e.MemoryState, e.Importance)
	}
	// The second topic closes once the silence after it has passed.
	f.say(t, "home", "青蓝", "sure", t0.Add(3*time.Hour+2*time.Minute))
	f.process(t, t0.Add(3*time.Hour+40*time.Minute))
	evs = f.events(t, "home", LevelEvent)
	if len(evs) != 2 || evs[1].Source.FirstMessageID != c.ID || evs[1].Messages != 2 {
		t.Fatalf("second topic: %+v", evs)
	}
	// Nothing new: a pass closes nothing twice.
	if rep := f.process(t, t0.Add(5*time.Hour)); rep.Closed != 0 {
		t.Fatalf("second pass closed %d", rep.Closed)
	}
}

func TestAgentOnlyFollowUpExtendsThePreviousTopic(t *testing.T) {
	t0 := day(2026, 3, 1, 9, 0)
	f := newFixture(t, t0, testConfig())
	f.say(t, "c", "amy", "bye", t0)
	tool := f.log.Tools()[0]
	f.clk.Set(t0.Add(time.Minute))
	res, err := tool.Run(context.Background(), callAs(ownerReader("c"), `{"op":"close","title":"amy said goodbye"}`))
	out := res.OutputText
	if err != nil || !strings.Contains(out, `recorded as "amy said goodbye"`) || !strings.Contains(out, "as the event %[event 20260301 9:00]") {
		t.Fatalf("event close: %q %v", out, err)
	}
	last := f.say(t, "c", "青蓝", "closed it, see you", t0.Add(2*time.Minute))
	f.process(t, t0.Add(time.Hour))
	evs := f.events(t, "c", LevelEvent)
	if len(evs) != 1 || evs[0].Source.LastMessageID != last.ID || evs[0].Messages != 2 || evs[0].ClosedBy != "tool" || evs[0].Title != "amy said goodbye" {
		t.Fatalf("records %+v", evs)
	}
	// Its run grew with it.
	if r := evs[0].Runs; len(r) != 1 || r[0].First != evs[0].Source.FirstMessageID || r[0].Last != last.ID {
		t.Fatalf("runs %+v, want the one from its first message to %s", r, last.ID)
	}
	// Nothing open now.
	f.clk.Set(t0.Add(2 * time.Hour))
	res, err = tool.Run(context.Background(), callAs(ownerReader("c"), `{"op":"close"}`))
	out = res.OutputText
	if err != nil || !strings.Contains(out, "no open topic") {
		t.Fatalf("second close: %q %v", out, err)
	}
	if _, err := tool.Run(context.Background(), callAs(ownerReader("c"), `{"op":"open"}`)); err == nil {
		t.Fatal("unknown op accepted")
	}
	if _, err := tool.Run(context.Background(), callAs(ownerReader("c"), `{"op":"close","titel":"x"}`)); err == nil {
		t.Fatal("misspelt field accepted")
	}
}

func TestContextStartIsThePreviousTopic(t *testing.T) {
	t0 := day(2026, 3, 2, 8, 0)
	f := newFixture(t, t0, testConfig())
	ctx := context.Background()
	first := f.say(t, "c", "amy", "morning", t0)
	if id, err := f.log.ContextStart(ctx, "c", t0); err != nil || id != "" {
		t.Fatalf("no previous topic: %q %v", id, err)
	}
	// Hours later: the message is stored, then the context is asked for.
	f.say(t, "c", "amy", "back again", t0.Add(5*time.Hour))
	if id, err := f.log.ContextStart(ctx, "c", t0.Add(5*time.Hour)); err != nil || id != first.ID {
		t.Fatalf("context start = %q, want the previous topic's first message %q (%v)", id, first.ID, err)
	}
	// Within the same topic the answer stays the same.
	f.say(t, "c", "amy", "still here", t0.Add(5*time.Hour+time.Minute))
	if id, _ := f.log.ContextStart(ctx, "c", t0.Add(5*time.Hour+time.Minute)); id != first.ID {
		t.Fatalf("context start moved inside a topic: %q", id)
	}
}

func TestTitleFailureIsRetriedWithBackoff(t *testing.T) {
	t0 := day(2026, 3, 3, 8, 0)
	f := newFixture(t, t0, testConfig())
	f.w.failTitle = 2
	f.say(t, "c", "amy", "hello", t0)
	rep := f.process(t, t0.Add(time.Hour))
	if len(rep.Failed) != 1 {
		t.Fatalf("report %+v, want a failure", rep)
	}
	e := f.events(t, "c", LevelEvent)[0]
	if e.Pending == nil || !e.Pending.Title || e.Pending.Attempts != 1 || e.Pending.LastError == "" || !e.Pending.NextTry.Equal(t0.Add(time.Hour+time.Minute)) {
		t.Fatalf("pending %+v", e.Pending)
	}
	// Before the retry time nothing is tried.
	if rep := f.process(t, t0.Add(time.Hour+30*time.Second)); len(rep.Failed) != 0 || rep.Titled != 0 {
		t.Fatalf("retried early: %+v", rep)
	}
	f.process(t, t0.Add(time.Hour+time.Minute)) // second failure: next try 2 minutes later
	if e := f.events(t, "c", LevelEvent)[0]; e.Pending.Attempts != 2 || !e.Pending.NextTry.Equal(t0.Add(time.Hour+3*time.Minute)) {
		t.Fatalf("second failure: %+v", e.Pending)
	}
	if rep := f.process(t, t0.Add(time.Hour+3*time.Minute)); rep.Titled != 1 {
		t.Fatalf("third try: %+v", rep)
	}
	if e := f.events(t, "c", LevelEvent)[0]; e.Pending != nil || e.Title == "" {
		t.Fatalf("after success: %+v", e)
	}
}

func TestLaterEventIncludesEarlierOnes(t *testing.T) {
	t0 := day(2026, 3, 4, 8, 0)
	f := newFixture(t, t0, testConfig())
	f.say(t, "c", "amy", "start the module", t0)
	f.process(t, t0.Add(time.Hour))
	old := f.events(t, "c", LevelEvent)[0]
	f.w.includes = func(in TopicInput) []string {
		if len(in.Earlier) != 1 || in.Earlier[0].ID != old.ID {
			t.Errorf("earlier records offered: %+v", in.Earlier)
		}
		return []string{old.ID, "not-a-record"}
	}
	f.say(t, "c", "amy", "the module is done", t0.Add(48*time.Hour))
	f.process(t, t0.Add(49*time.Hour))
	evs := f.events(t, "c", LevelEvent)
	if len(evs) != 2 || len(evs[1].Children) != 1 || evs[1].Children[0] != old.ID {
		t.Fatalf("children %+v", evs[1].Children)
	}
	// Including the old event deepened it by SPEC §3's review, at the new
	// event's end, two days later: R = 0.9^(2/3.5) = 0.941570,
	// S' = 3.5·(1 + 5·e^0·(1 − 0.941570)) = 4.52252.
	if grown := evs[0].MemoryState.S; math.Abs(grown-4.52252) > 1e-4 {
		t.Fatalf("S of the included event: %v → %v, want 4.52252", old.MemoryState.S, grown)
	}
}
