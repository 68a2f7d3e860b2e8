package observer

import (
	"context"
	"errors"
	"fmt"
	"github.com/cyan-agent/cyan/clock"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
)

// Spec declares an observer.
type Spec struct {
	Name string
	// Source says where it was declared: "builtin", "plan" or "persona".
	Source   string
	Triggers []Trigger
	// NoCatchUp turns off the catch-up of cron firings missed while the
	// daemon was down (by default one missed firing is made up on start).
	// A missed one-off time always fires once.
	NoCatchUp bool
	// Budget is the observer's tokens per day (0: none of its own; the
	// daemon-wide budget for background work still applies).
	Budget int
	// Account is the budget account its runs are charged to (default: its
	// name); observers that share one share its budget.
	Account string
	// AlwaysRun keeps the observer running over budget (work that must
	// happen, such as counting turns); its metered LLM calls still fail.
	AlwaysRun bool
	// Speaks marks an observer whose runs talk to people on their own:
	// quiet hours hold it.
	Speaks bool
	// Quiet overrides the manager's quiet hours for this observer.
	Quiet *QuietHours
	// Hold makes a firing that quiet hours or the budget stop wait for their
	// end instead of being skipped (deferred plans hold; chatter does not).
	Hold bool
	// Decide is asked, on a self-decided (Every) firing, whether to act
	// now; not acting is silent.
	Decide func(ctx context.Context, f Firing) (act bool, why string, err error)
	// Run does the observer's work. Its context carries the observer's
	// account (WithAccount), so metered LLM calls are charged to it.
	Run func(ctx context.Context, f Firing) error
}

// Firing is one reason to run an observer.
type Firing struct {
	Observer string
	Reason   string // "cron 0 9 * * *", "at …", "on AfterAIResponse", "call", "catch-up: …"
	Time     time.Time
	Event    *Event
	Keyword  string
	selfDec  bool
	done     chan error
}

// Options configure NewManager.
type Options struct {
	// Store keeps the observers' marks, and its journal carries the
	// activity they follow (nil: nothing persists, no activity; tests).
	Store    *store.Store
	Clock    clock.Clock // nil: the wall clock
	Governor *Governor   // nil: no budgets
	Quiet    QuietHours
	Logger   *slog.Logger
}

// queueSize bounds the bus and each observer's queue of firings.
const queueSize = 1024

// Manager runs observers.
type Manager struct {
	clock clock.Clock
	gov   *Governor
	quiet QuietHours
	log   *slog.Logger
	marks marks

	journal *journal.Journal
	events  chan Event
	wake    chan struct{}

	mu      sync.Mutex
	obs     map[string]*entry
	runCtx  context.Context // set while Run runs
	workers sync.WaitGroup
	// What tests ask to know the scheduler is idle: whether it sleeps in its
	// select and until when, and how many events and pokes were posted and
	// handled.
	sleeping        bool
	sleepUntil      time.Time // zero: no timer
	posted, handled uint64
}

type entry struct {
	spec   Spec
	next   []time.Time // per trigger; zero: none
	held   *Firing     // a firing waiting for quiet hours or the budget
	queue  chan Firing
	cancel context.CancelFunc
	// pending counts firings queued or running.
	pending int

	state      string
	lastRun    time.Time
	lastResult string
	runs       int
}

// NewManager makes a manager; Run starts it.
func NewManager(o Options) *Manager {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Manager{clock: o.Clock, gov: o.Governor, quiet: o.Quiet, log: o.Logger,
		events: make(chan Event, queueSize), wake: make(chan struct{}, 1), obs: map[string]*entry{}}
	if o.Store != nil {
		m.marks = marks{db: o.Store.DB()}
		m.journal = o.Store.Journal()
	}
	return m
}

// Add declares an observer, replacing one of the same name.
func (m *Manager) Add(s Spec) error {
	if s.Name == "" || s.Run == nil {
		return errors.New("observer: a spec needs a name and a Run function")
	}
	for i := range s.Triggers {
		if err := s.Triggers[i].check(); err != nil {
			return fmt.Errorf("observer %s: trigger %d: %w", s.Name, i+1, err)
		}
	}
	if s.Source == "" {
		s.Source = "builtin"
	}
	if s.Account == "" {
		s.Account = s.Name
	}
	m.mu.Lock()
	if old := m.obs[s.Name]; old != nil && old.cancel != nil {
		old.cancel()
	}
	e := &entry{spec: s, queue: make(chan Firing, queueSize), state: "idle"}
	m.obs[s.Name] = e
	if m.gov != nil && (s.Budget > 0 || s.Account == s.Name) {
		m.gov.SetBudget(s.Account, s.Budget)
	}
	if m.runCtx != nil {
		m.schedule(e, m.clock.Now())
		m.startWorker(e)
	}
	m.poke()
	m.mu.Unlock()
	return nil
}

// Remove stops and forgets an observer.
func (m *Manager) Remove(name string) {
	m.mu.Lock()
	if e := m.obs[name]; e != nil {
		if e.cancel != nil {
			e.cancel()
		}
		delete(m.obs, name)
	}
	m.poke()
	m.mu.Unlock()
	m.marks.forget(name)
}

// Has reports whether an observer of that name exists.
func (m *Manager) Has(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.obs[name] != nil
}

// publish puts an activity event on the bus, waiting while it is full
// (nothing is dropped: the journal holds what comes meanwhile).
func (m *Manager) publish(ctx context.Context, e Event) bool {
	m.mu.Lock()
	m.posted++
	m.mu.Unlock()
	select {
	case m.events <- e:
		return true
	case <-ctx.Done():
		m.markHandled()
		return false
	}
}

// follow turns the journal's events into activity on the bus until ctx
// ends. Its subscription holds no buffer, so a busy scheduler delays
// activity but never loses it.
func (m *Manager) follow(ctx context.Context, sub *journal.Subscription) {
	for {
		evs, err := sub.Next(ctx)
		if err != nil {
			return
		}
		for _, je := range evs {
			if je.Kind == journal.Gap {
				continue
			}
			if ev, ok := activityOf(je); ok && !m.publish(ctx, ev) {
				return
			}
		}
	}
}

// Call runs an observer now (the call trigger) and waits for it.
func (m *Manager) Call(ctx context.Context, name string) error {
	m.mu.Lock()
	e := m.obs[name]
	running := m.runCtx != nil
	m.mu.Unlock()
	if e == nil {
		return fmt.Errorf("observer: no observer named %q; 'cyan observers ls' lists them", name)
	}
	if !running {
		return errors.New("observer: the observers are not running")
	}
	f := Firing{Observer: name, Reason: "call", Time: m.clock.Now(), done: make(chan error, 1)}
	m.mu.Lock()
	e.pending++
	m.mu.Unlock()
	select {
	case e.queue <- f:
	case <-ctx.Done():
		m.mu.Lock()
		e.pending--
		m.mu.Unlock()
		return ctx.Err()
	}
	select {
	case err := <-f.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// poke makes the scheduler look again. Callers hold m.mu.
func (m *Manager) poke() {
	select {
	case m.wake <- struct{}{}:
		m.posted++
	default:
	}
}

// Run fires observers until ctx ends. On start it makes up missed time
// firings and publishes AtStartup; on stop it runs the BeforeShutdown
// observers (briefly) and waits for running work.
func (m *Manager) Run(ctx context.Context) error {
	wctx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	m.mu.Lock()
	m.runCtx = wctx
	now := m.clock.Now()
	for _, e := range m.obs {
		m.catchUp(e, now)
		m.schedule(e, now)
		m.startWorker(e)
	}
	m.mu.Unlock()
	var follower sync.WaitGroup
	defer follower.Wait()
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	if m.journal != nil {
		sub := m.journal.Subscribe(m.journal.Last(), journal.Filter{Kinds: []journal.Kind{journal.MessageIn, journal.TurnDone, journal.MemoryChanged}})
		follower.Go(func() { m.follow(followCtx, sub) })
	}
	m.posted++ // AtStartup, handled first (the bus is empty: no wait)
	m.events <- Event{Name: AtStartup}

	for {
		var timer <-chan time.Time
		if at, ok := m.earliest(); ok {
			timer = m.clock.After(at.Sub(m.clock.Now()))
		}
		m.mu.Lock()
		m.sleeping, m.sleepUntil = true, time.Time{}
		if timer != nil {
			m.sleepUntil, _ = m.earliestLocked()
		}
		m.mu.Unlock()
		select {
		case <-ctx.Done():
			m.awake()
			stopFollowing()
			follower.Wait()
			m.shutdown(stopWorkers)
			return nil
		case <-timer:
			m.awake()
			m.dispatchDue(m.clock.Now())
		case e := <-m.events:
			m.awake()
			m.dispatchEvent(e)
			m.markHandled()
		case <-m.wake:
			m.awake()
			m.markHandled()
		}
	}
}

func (m *Manager) markHandled() {
	m.mu.Lock()
	m.handled++
	m.mu.Unlock()
}

func (m *Manager) awake() {
	m.mu.Lock()
	m.sleeping = false
	m.mu.Unlock()
}

// Idle reports whether the scheduler sleeps with nothing pending (tests
// wait for it instead of for time).
func (m *Manager) Idle() bool { return m.idle() }

// idle reports whether the scheduler sleeps with nothing pending: no event
// on the bus, no timer fired, no firing queued or running.
func (m *Manager) idle() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.sleeping || m.posted != m.handled || (!m.sleepUntil.IsZero() && !m.sleepUntil.After(m.clock.Now())) {
		return false
	}
	for _, e := range m.obs {
		if e.pending > 0 {
			return false
		}
	}
	return true
}

// catchUp queues one firing for time firings missed since the observer last
// ran (or was first seen). Callers hold m.mu.
func (m *Manager) catchUp(e *entry, now time.Time) {
	name := e.spec.Name
	since := m.marks.getTime("since", name)
	if since.IsZero() {
		since = now
		_ = m.marks.setTime("since", name, now)
	}
	base := since
	if last := m.marks.getTime("last", name); last.After(base) {
		base = last
	}
	for i := range e.spec.Triggers {
		t := &e.spec.Triggers[i]
		if t.Every != 0 || (!t.timed()) {
			continue
		}
		if t.schedule != nil && e.spec.NoCatchUp {
			continue
		}
		if missed := t.next(base); !missed.IsZero() && !missed.After(now) {
			m.enqueue(e, Firing{Observer: name, Reason: fmt.Sprintf("catch-up: %s was due at %s", t, missed.Format(time.RFC3339)), Time: missed})
			_ = m.marks.setTime("last", name, now)
			return // once, however many were missed
		}
	}
}

// schedule computes the next firing of each time trigger from now.
// Callers hold m.mu.
func (m *Manager) schedule(e *entry, now time.Time) {
	e.next = make([]time.Time, len(e.spec.Triggers))
	for i := range e.spec.Triggers {
		e.next[i] = e.spec.Triggers[i].next(now)
	}
}

func (m *Manager) earliest() (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.earliestLocked()
}

func (m *Manager) earliestLocked() (time.Time, bool) {
	var at time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	for _, e := range m.obs {
		for _, t := range e.next {
			consider(t)
		}
		if e.held != nil {
			consider(e.held.Time)
		}
	}
	return at, !at.IsZero()
}

// dispatchDue queues every time firing that is due. A firing late because
// the scheduler was held up fires once.
func (m *Manager) dispatchDue(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.obs {
		if h := e.held; h != nil && !h.Time.After(now) {
			e.held = nil
			f := *h
			f.Reason += " (held until " + h.Time.Format("15:04") + ")"
			m.enqueue(e, f)
		}
		fired := false
		for i, at := range e.next {
			if at.IsZero() || at.After(now) {
				continue
			}
			t := &e.spec.Triggers[i]
			if !fired {
				m.enqueue(e, Firing{Observer: e.spec.Name, Reason: t.String(), Time: at, selfDec: t.Every != 0})
				fired = true
				_ = m.marks.setTime("last", e.spec.Name, at)
			}
			e.next[i] = t.next(now)
		}
	}
}

func (m *Manager) dispatchEvent(ev Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.obs {
		if ev.Proactive && e.spec.Speaks {
			continue // its own (or another speaker's) proactive turn: see Event
		}
		for i := range e.spec.Triggers {
			if ok, kw := e.spec.Triggers[i].matches(ev); ok {
				evc := ev
				m.enqueue(e, Firing{Observer: e.spec.Name, Reason: "on " + ev.Name, Time: m.clock.Now(), Event: &evc, Keyword: kw})
				break
			}
		}
	}
}

// enqueue hands a firing to the observer's worker; a full queue drops it.
// Callers hold m.mu.
func (m *Manager) enqueue(e *entry, f Firing) {
	select {
	case e.queue <- f:
		e.pending++
	default:
		m.log.Warn("observer queue full; firing dropped", "observer", e.spec.Name, "reason", f.Reason)
	}
}

// startWorker runs an observer's firings one at a time. Callers hold m.mu.
func (m *Manager) startWorker(e *entry) {
	ctx, cancel := context.WithCancel(m.runCtx)
	e.cancel = cancel
	m.workers.Add(1)
	go func() {
		defer m.workers.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case f := <-e.queue:
				err := m.fireSafe(ctx, e, f)
				m.mu.Lock()
				e.pending--
				m.mu.Unlock()
				if f.done != nil {
					f.done <- err
				}
			}
		}
	}()
}

// fireSafe is fire with a panic of the observer's own code turned into
// the firing's error: an observer that breaks never takes the daemon down.
func (m *Manager) fireSafe(ctx context.Context, e *entry, f Firing) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("observer %s panicked: %v", e.spec.Name, r)
			m.finish(e, f, "error ("+f.Reason+"): "+err.Error(), err)
		}
	}()
	return m.fire(ctx, e, f)
}

// fire runs one firing, unless quiet hours or the budget stop it (then a
// holding observer waits for their end).
func (m *Manager) fire(ctx context.Context, e *entry, f Firing) error {
	now := m.clock.Now()
	quiet := m.quiet
	if e.spec.Quiet != nil {
		quiet = *e.spec.Quiet
	}
	if e.spec.Speaks && f.Reason != "call" && quiet.Contains(now) {
		return m.hold(e, f, quiet.End(now), "quiet hours "+quiet.String())
	}
	if m.gov != nil && !e.spec.AlwaysRun {
		var be *BudgetError
		if err := m.gov.Check(e.spec.Account); errors.As(err, &be) {
			return m.hold(e, f, be.Until, "paused: "+be.Error())
		}
	}
	actx := journal.WithOrigin(WithAccount(ctx, e.spec.Account), e.spec.Name)
	m.setState(e, "running", "")
	if f.selfDec && e.spec.Decide != nil {
		act, why, err := e.spec.Decide(actx, f)
		if err != nil || !act {
			result := "decided not to act"
			if why != "" {
				result += ": " + why
			}
			if err != nil {
				result = "could not decide: " + err.Error()
			}
			m.finish(e, f, result, err)
			return err
		}
	}
	err := e.spec.Run(actx, f)
	result := "ok (" + f.Reason + ")"
	if err != nil {
		result = "error (" + f.Reason + "): " + err.Error()
	}
	m.finish(e, f, result, err)
	return err
}

// hold parks a firing until `until` for a holding observer, or skips it.
func (m *Manager) hold(e *entry, f Firing, until time.Time, why string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.spec.Hold && f.done == nil {
		f.Time = until
		e.held = &f
		e.state = why + "; held until " + until.Format("2006-01-02 15:04")
		m.poke()
		return nil
	}
	e.state = why
	e.lastResult = "skipped (" + f.Reason + "): " + why
	return fmt.Errorf("observer %s: %s", e.spec.Name, why)
}

func (m *Manager) setState(e *entry, state, _ string) {
	m.mu.Lock()
	e.state = state
	m.mu.Unlock()
}

func (m *Manager) finish(e *entry, f Firing, result string, err error) {
	m.mu.Lock()
	e.state, e.lastRun, e.lastResult = "idle", m.clock.Now(), result
	e.runs++
	if errors.Is(err, ErrOverBudget) {
		e.state = "paused: " + err.Error()
	}
	m.mu.Unlock()
	if err != nil && !errors.Is(err, context.Canceled) {
		m.log.Warn("observer run failed", "observer", e.spec.Name, "reason", f.Reason, "err", err)
	}
}

// shutdown runs the BeforeShutdown observers (two seconds at most), then
// stops every worker.
func (m *Manager) shutdown(stopWorkers context.CancelFunc) {
	m.mu.Lock()
	var last []*entry
	for _, e := range m.obs {
		for i := range e.spec.Triggers {
			if e.spec.Triggers[i].On == BeforeShutdown {
				last = append(last, e)
				break
			}
		}
	}
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	for _, e := range last {
		ev := Event{Name: BeforeShutdown}
		_ = e.spec.Run(WithAccount(ctx, e.spec.Account), Firing{Observer: e.spec.Name, Reason: "on " + BeforeShutdown, Time: m.clock.Now(), Event: &ev})
	}
	cancel()
	stopWorkers()
	m.workers.Wait()
	m.mu.Lock()
	m.runCtx = nil
	m.mu.Unlock()
}

// Status lists the observers by name.
func (m *Manager) Status() []packets.ObserverStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]packets.ObserverStatus, 0, len(m.obs))
	for _, e := range m.obs {
		st := packets.ObserverStatus{Name: e.spec.Name, Source: e.spec.Source, State: e.state, LastRun: e.lastRun, LastResult: e.lastResult, Runs: e.runs}
		st.Triggers = append(st.Triggers, "call")
		for i, t := range e.spec.Triggers {
			st.Triggers = append(st.Triggers, t.String())
			if i < len(e.next) && !e.next[i].IsZero() && (st.NextRun.IsZero() || e.next[i].Before(st.NextRun)) {
				st.NextRun = e.next[i]
			}
		}
		if e.held != nil && (st.NextRun.IsZero() || e.held.Time.Before(st.NextRun)) {
			st.NextRun = e.held.Time
		}
		if m.gov != nil {
			st.Spent, st.Budget, _ = m.gov.Spent(e.spec.Account)
			if err := m.gov.Check(e.spec.Account); err != nil && e.state == "idle" {
				st.State = "paused: " + err.Error()
			}
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b packets.ObserverStatus) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}
