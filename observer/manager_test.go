package observer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/packets"

	"github.com/cyan-agent/cyan/internal/clocktest"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
)

var day1 = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

// harness runs a manager on a fake clock and records every run.
type harness struct {
	t     *testing.T
	m     *Manager
	clock *clocktest.Clock
	runs  chan Firing
	stop  context.CancelFunc
	done  chan struct{}
}

func newHarness(t *testing.T, st *store.Store, at time.Time, o Options) *harness {
	t.Helper()
	h := &harness{t: t, clock: clocktest.New(at), runs: make(chan Firing, 64)}
	o.Store, o.Clock = st, h.clock
	h.m = NewManager(o)
	return h
}

func (h *harness) record(ctx context.Context, f Firing) error {
	h.runs <- f
	return nil
}

func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.stop, h.done = cancel, make(chan struct{})
	go func() { h.m.Run(ctx); close(h.done) }()
	h.idle()
}

func (h *harness) close() {
	h.stop()
	<-h.done
}

// idle waits until the scheduler sleeps on the clock again and no firing is
// queued or running.
func (h *harness) idle() {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if h.m.idle() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	h.t.Fatal("the scheduler never went idle")
}

// advanceTo moves the clock and waits for the work it causes.
func (h *harness) advanceTo(t time.Time) {
	h.clock.Set(t)
	h.idle()
}

func (h *harness) expectRun(reason string) Firing {
	h.t.Helper()
	select {
	case f := <-h.runs:
		if !strings.Contains(f.Reason, reason) {
			h.t.Fatalf("run for %q, want %q", f.Reason, reason)
		}
		return f
	case <-time.After(5 * time.Second):
		h.t.Fatalf("no run (want %q)", reason)
	}
	return Firing{}
}

func (h *harness) expectNone() {
	h.t.Helper()
	select {
	case f := <-h.runs:
		h.t.Fatalf("unexpected run: %+v", f)
	default:
	}
}

// say posts a person's message on the journal, as the store does.
func (h *harness) say(channel, text string) {
	h.m.journal.Post(journal.New(journal.MessageIn, channel, journal.Message{ID: "m", Role: "user", Text: text}))
}

// answered posts an answered turn, as main-virtual does; origin names the
// observer whose proactive turn it was ("" for an answer to a person).
func (h *harness) answered(channel, text, origin string) {
	e := journal.New(journal.TurnDone, channel, journal.Turn{MessageID: "m", Replies: []string{text}})
	e.Proactive, e.Origin = origin != "", origin
	h.m.journal.Post(e)
}

func memStore(t *testing.T) *store.Store {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestCronAndOneOffFireOnTime(t *testing.T) {
	h := newHarness(t, memStore(t), day1, Options{})
	h.m.Add(Spec{Name: "morning", Triggers: []Trigger{{Cron: "0 9 * * *"}}, Run: h.record})
	h.m.Add(Spec{Name: "once", Triggers: []Trigger{{At: day1.Add(90 * time.Minute)}}, Run: h.record})
	h.start()
	defer h.close()
	h.advanceTo(day1.Add(59 * time.Minute)) // 08:59
	h.expectNone()
	h.advanceTo(day1.Add(time.Hour)) // 09:00
	if f := h.expectRun("cron 0 9 * * *"); !f.Time.Equal(day1.Add(time.Hour)) {
		t.Fatalf("fired for %v", f.Time)
	}
	h.advanceTo(day1.Add(90 * time.Minute))
	h.expectRun("at 2026-11-23T09:30:00Z")
	h.advanceTo(day1.Add(24 * time.Hour))
	h.expectNone()
	h.advanceTo(day1.Add(25 * time.Hour)) // the next day at 09:00
	h.expectRun("cron")
	for _, st := range h.m.Status() {
		if st.Name == "morning" && (st.Runs != 2 || !st.NextRun.Equal(day1.Add(49*time.Hour))) {
			t.Fatalf("status = %+v", st)
		}
	}
}

func TestCatchUpOnceAfterDowntime(t *testing.T) {
	st := memStore(t)
	spec := func(h *harness) Spec {
		return Spec{Name: "morning", Triggers: []Trigger{{Cron: "0 9 * * *"}}, Run: h.record}
	}
	h := newHarness(t, st, day1, Options{})
	h.m.Add(spec(h))
	h.start()
	h.advanceTo(day1.Add(time.Hour))
	h.expectRun("cron")
	h.close()
	// Down over two firings (day 2 and day 3 at 09:00); up on day 3 at 10:00.
	h2 := newHarness(t, st, day1.Add(50*time.Hour), Options{})
	h2.m.Add(spec(h2))
	h2.start()
	defer h2.close()
	h2.expectRun("catch-up: cron 0 9 * * * was due at 2026-11-24T09:00:00Z")
	h2.expectNone()
	// A one-off missed while down fires once too, even without catch-up.
	h2.m.Add(Spec{Name: "noop", NoCatchUp: true, Triggers: []Trigger{{Cron: "0 9 * * *"}}, Run: h2.record})
	h2.expectNone()
}

func TestActivityTriggers(t *testing.T) {
	h := newHarness(t, memStore(t), day1, Options{})
	var mu sync.Mutex
	seen := map[string][]string{}
	rec := func(name string) func(context.Context, Firing) error {
		return func(_ context.Context, f Firing) error {
			mu.Lock()
			seen[name] = append(seen[name], f.Event.Name+":"+f.Keyword)
			mu.Unlock()
			return h.record(nil, f)
		}
	}
	h.m.Add(Spec{Name: "after-user", Triggers: []Trigger{{On: AfterUserMessage}}, Run: rec("after-user")})
	h.m.Add(Spec{Name: "after-answer", Triggers: []Trigger{{On: AfterAIResponse}}, Run: rec("after-answer")})
	h.m.Add(Spec{Name: "keyword", Triggers: []Trigger{{On: Keyword, Keywords: []string{"remind", "提醒"}}}, Run: rec("keyword")})
	h.m.Add(Spec{Name: "startup", Triggers: []Trigger{{On: AtStartup}}, Run: rec("startup")})
	h.start()
	h.expectRun("on AtStartup")
	h.say("home", "hello")
	h.expectRun("on AfterUserMessage")
	h.idle()
	h.expectNone()
	h.say("home", "请提醒我喝水")
	h.expectRun("on AfterUserMessage")
	h.expectRun("on AfterUserMessage")
	h.answered("home", "ok", "")
	h.expectRun("on AfterAIResponse")
	h.idle()
	h.close()
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen["keyword"], ",") != "AfterUserMessage:提醒" || len(seen["after-user"]) != 2 || len(seen["after-answer"]) != 1 || len(seen["startup"]) != 1 {
		t.Fatalf("seen = %v", seen)
	}
}

func TestASpeakingObserverDoesNotWakeItself(t *testing.T) {
	h := newHarness(t, memStore(t), day1, Options{})
	var mu sync.Mutex
	var ran []string
	rec := func(name string) func(context.Context, Firing) error {
		return func(ctx context.Context, f Firing) error {
			mu.Lock()
			ran = append(ran, name+"<"+journal.OriginOf(ctx))
			mu.Unlock()
			return h.record(ctx, f)
		}
	}
	h.m.Add(Spec{Name: "chatter", Speaks: true, Triggers: []Trigger{{On: AfterAIResponse}}, Run: rec("chatter")})
	h.m.Add(Spec{Name: "counter", Triggers: []Trigger{{On: AfterAIResponse}}, Run: rec("counter")})
	h.start()
	defer h.close()
	h.answered("home", "an answer to alice", "")
	h.expectRun("on AfterAIResponse")
	h.expectRun("on AfterAIResponse")
	// What chatter then said is a proactive turn of its own: it wakes the
	// counter (work after every turn) but no speaker.
	h.answered("home", "by the way…", "chatter")
	h.expectRun("on AfterAIResponse")
	h.idle()
	h.expectNone()
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(ran)
	if fmt.Sprint(ran) != "[chatter<chatter counter<counter counter<counter]" {
		t.Fatalf("runs = %v", ran)
	}
}

func TestSelfDecidedNotNowStaysSilent(t *testing.T) {
	h := newHarness(t, memStore(t), day1, Options{})
	decisions := 0
	h.m.Add(Spec{Name: "chatty", Speaks: true, Triggers: []Trigger{{Every: 30 * time.Minute}},
		Decide: func(context.Context, Firing) (bool, string, error) {
			decisions++
			return decisions == 2, "nothing worth saying", nil
		},
		Run: h.record})
	h.start()
	defer h.close()
	h.advanceTo(day1.Add(30 * time.Minute))
	h.expectNone()
	st := h.m.Status()[0]
	if !strings.Contains(st.LastResult, "decided not to act: nothing worth saying") {
		t.Fatalf("status = %+v", st)
	}
	h.advanceTo(day1.Add(60 * time.Minute))
	h.expectRun("self-decided every 30m0s")
	if decisions != 2 {
		t.Fatalf("decided %d times", decisions)
	}
}

func TestBudgetPausesAndResumes(t *testing.T) {
	fake, inner := llmtest.Start(t)
	fake.SetDefault(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "ok", Usage: llm.Usage{InputTokens: 50, OutputTokens: 10}}
	})
	st := memStore(t)
	h := newHarness(t, st, day1, Options{})
	ms := marks{db: st.DB()}
	gov := NewGovernor(h.clock, 0, ms.spentOn, ms.saveSpent)
	h.m = NewManager(Options{Store: st, Clock: h.clock, Governor: gov})
	client := Meter(inner, gov)
	h.m.Add(Spec{Name: "summariser", Budget: 100, Triggers: []Trigger{{Cron: "0 * * * *"}}, Run: func(ctx context.Context, f Firing) error {
		_, err := client.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "sum up"}}})
		if err == nil {
			h.runs <- f
		}
		return err
	}})
	h.start()
	defer h.close()
	for hour := 1; hour <= 2; hour++ {
		h.advanceTo(day1.Add(time.Duration(hour) * time.Hour))
		h.expectRun("cron")
	}
	if spent, budget, _ := gov.Spent("summariser"); spent != 120 || budget != 100 {
		t.Fatalf("spent %d of %d", spent, budget)
	}
	h.advanceTo(day1.Add(3 * time.Hour))
	h.expectNone()
	st0 := h.m.Status()[0]
	if !strings.HasPrefix(st0.State, "paused") || !strings.Contains(st0.State, "2026-11-24 00:00") {
		t.Fatalf("over budget, status = %+v", st0)
	}
	if n := len(fake.Requests()); n != 2 {
		t.Fatalf("%d model calls; the paused observer must not call", n)
	}
	// Foreground calls are never metered.
	if _, err := client.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatalf("foreground call refused: %v", err)
	}
	// The next window: it resumes.
	h.advanceTo(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	h.expectRun("cron")
	if spent, _, _ := gov.Spent("summariser"); spent != 60 {
		t.Fatalf("new window spent %d", spent)
	}
	// The count survives a restart within the day.
	gov2 := NewGovernor(h.clock, 0, ms.spentOn, ms.saveSpent)
	if spent, _, _ := gov2.Spent("summariser"); spent != 60 {
		t.Fatalf("after restart spent %d", spent)
	}
	var be *BudgetError
	gov2.SetBudget("x", 10)
	gov2.Charge("x", 10)
	if err := gov2.Check("x"); !errors.As(err, &be) || !errors.Is(err, ErrOverBudget) {
		t.Fatalf("Check = %v", err)
	}
}

func TestQuietHoursHoldADuePlan(t *testing.T) {
	quiet, err := ParseQuietHours("23:00-07:00")
	if err != nil {
		t.Fatal(err)
	}
	night := time.Date(2026, 11, 23, 22, 0, 0, 0, time.UTC)
	h := newHarness(t, memStore(t), night, Options{Quiet: quiet})
	due := night.Add(90 * time.Minute) // 23:30, in quiet hours
	h.m.Add(Spec{Name: "plan:p1", Source: "plan", Speaks: true, Hold: true, Triggers: []Trigger{{At: due}}, Run: h.record})
	h.m.Add(Spec{Name: "chatter", Speaks: true, Triggers: []Trigger{{At: due}}, Run: h.record})
	h.start()
	defer h.close()
	h.advanceTo(due)
	h.expectNone()
	var plan packets.ObserverStatus
	for _, s := range h.m.Status() {
		if s.Name == "plan:p1" {
			plan = s
		}
	}
	if !strings.Contains(plan.State, "held until 2026-11-24 07:00") || !plan.NextRun.Equal(time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)) {
		t.Fatalf("held plan status = %+v", plan)
	}
	h.advanceTo(time.Date(2026, 11, 24, 6, 59, 0, 0, time.UTC))
	h.expectNone()
	h.advanceTo(time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC))
	h.expectRun("at 2026-11-23T23:30:00Z (held until 07:00)")
	h.expectNone() // the chatter was skipped, not held
}

func TestQuietHoursParse(t *testing.T) {
	q, _ := ParseQuietHours("23:00-07:00")
	at := func(h, m int) time.Time { return time.Date(2026, 1, 1, h, m, 0, 0, time.UTC) }
	for _, tt := range []struct {
		t    time.Time
		want bool
	}{{at(22, 59), false}, {at(23, 0), true}, {at(3, 0), true}, {at(6, 59), true}, {at(7, 0), false}, {at(12, 0), false}} {
		if q.Contains(tt.t) != tt.want {
			t.Errorf("Contains(%v) = %v", tt.t, !tt.want)
		}
	}
	if e := q.End(at(23, 30)); !e.Equal(time.Date(2026, 1, 2, 7, 0, 0, 0, time.UTC)) {
		t.Errorf("End = %v", e)
	}
	day, _ := ParseQuietHours("12:00-13:00")
	if !day.Contains(at(12, 30)) || day.Contains(at(13, 0)) {
		t.Error("daytime span")
	}
	for _, bad := range []string{"23-07", "7:00", "10:00-10:00", "25:00-01:00"} {
		if _, err := ParseQuietHours(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTriggerChecks(t *testing.T) {
	for _, tt := range []struct {
		tr   Trigger
		want string
	}{
		{Trigger{Cron: "every day"}, "five fields"},
		{Trigger{On: "Sometimes"}, "unknown event"},
		{Trigger{On: Keyword}, "needs keywords"},
		{Trigger{Every: time.Second}, "too often"},
		{Trigger{}, "exactly one"},
		{Trigger{Cron: "@daily", On: AtStartup}, "exactly one"},
	} {
		if err := tt.tr.check(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("check(%+v) = %v, want %q", tt.tr, err, tt.want)
		}
	}
}

func TestCall(t *testing.T) {
	h := newHarness(t, memStore(t), day1, Options{})
	h.m.Add(Spec{Name: "manual", Run: func(ctx context.Context, f Firing) error {
		if AccountOf(ctx) != "manual" {
			return errors.New("no account on the context")
		}
		return h.record(ctx, f)
	}})
	if err := h.m.Call(context.Background(), "manual"); err == nil {
		t.Fatal("Call before Run must fail")
	}
	h.start()
	defer h.close()
	if err := h.m.Call(context.Background(), "manual"); err != nil {
		t.Fatal(err)
	}
	h.expectRun("call")
	if err := h.m.Call(context.Background(), "nobody"); err == nil || !strings.Contains(err.Error(), "observers ls") {
		t.Fatalf("unknown: %v", err)
	}
}

// TestPanickingObserver: an observer whose code panics fails that run,
// and the manager, its other observers and the next runs go on.
func TestPanickingObserver(t *testing.T) {
	h := newHarness(t, memStore(t), day1, Options{})
	h.m.Add(Spec{Name: "broken", Run: func(context.Context, Firing) error {
		var f *Firing
		_ = f.Event.Turn // a nil pointer, as a call firing's missing event once was
		return nil
	}})
	h.m.Add(Spec{Name: "manual", Run: h.record})
	h.start()
	defer h.close()
	for range 2 {
		if err := h.m.Call(context.Background(), "broken"); err == nil || !strings.Contains(err.Error(), "observer broken panicked") {
			t.Fatalf("call of a panicking observer: %v", err)
		}
	}
	if err := h.m.Call(context.Background(), "manual"); err != nil {
		t.Fatal(err)
	}
	h.expectRun("call")
	for _, s := range h.m.Status() {
		if s.Name == "broken" && (s.State != "idle" || !strings.Contains(s.LastResult, "panicked")) {
			t.Fatalf("status: %+v", s)
		}
	}
}

// TestOnlyAnAnsweredTurnIsAResponse: a turn that failed or was interrupted
// is on the journal too (for the metrics), but wakes no observer of "after
// a response"; a turn posted before turns said their outcome was answered.
func TestOnlyAnAnsweredTurnIsAResponse(t *testing.T) {
	for _, c := range []struct {
		name    string
		outcome string
		want    bool
	}{
		{"answered", journal.TurnAnswered, true},
		{"written before outcomes were kept", "", true},
		{"failed", journal.TurnFailed, false},
		{"interrupted", journal.TurnInterrupted, false},
	} {
		e := journal.New(journal.TurnDone, "home", journal.Turn{MessageID: "m", Outcome: c.outcome, Replies: []string{}})
		ev, ok := activityOf(e)
		if ok != c.want || ok && ev.Name != AfterAIResponse {
			t.Errorf("%s: %+v %v, want %v", c.name, ev, ok, c.want)
		}
	}
}
