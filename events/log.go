package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/clock"

	"github.com/cyan-agent/cyan/backoff"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/store"
)

// Options configure New.
type Options struct {
	Store  *store.Store
	Config config.Events
	// Writer makes titles, summaries and extractions (an LLM behind it).
	Writer Writer
	// AgentName is the agent's current name (the persona's); nil: "agent".
	AgentName func() string
	// Escape renders untrusted text (titles, facts, lines) for the prompt so
	// that it cannot forge notation; the daemon passes main-virtual's.
	Escape func(string) string
	// Location overrides the configured time zone (tests).
	Location *time.Location
	// IsOwner tells the owner's messages (speaker name, platform id,
	// private or not), so the facts a topic of the owner's private chats
	// shows are the owner's knowledge (scope.go); nil: nobody's are.
	IsOwner func(speaker, userID string, private bool) bool
	// HistoryRanges numbers a record's runs as the history references that
	// open them (open.go); the daemon passes recall's numbering. nil: an
	// opened record shows its runs' message ids.
	HistoryRanges HistoryRanges
	// FindTheories finds the theories a topic's talk touches (topictheories.go);
	// the daemon passes the recall index's. nil: none come to a topic.
	FindTheories TheoryFinder
	Decay        DecayLaw         // zero: DefaultDecay
	Now          func() time.Time // nil: time.Now
	Logger       *slog.Logger     // nil: discard
}

// Log is the event log of one data dir, with its objects, relations and
// theories.
type Log struct {
	st       *store.Store
	db       postingDB
	cfg      config.Events
	cal      calendar
	sched    clock.Schedule
	w        Writer
	agent    func() string
	escape   func(string) string
	isOwner  func(speaker, userID string, private bool) bool
	decay    DecayLaw
	ranges   HistoryRanges
	theories TheoryFinder
	silence  time.Duration
	now      func() time.Time
	log      *slog.Logger
	mu       sync.Mutex    // serialises writes of topics, records and objects
	work     sync.Mutex    // serialises Process runs
	kick     chan struct{} // asks Run for a full pass (1 slot: kicks coalesce)
	interval time.Duration // how often Run closes silent topics
}

// New checks the options and builds the log; it makes sure the agent's own
// object exists.
func New(o Options) (*Log, error) {
	switch {
	case o.Store == nil:
		return nil, errors.New("events: no store")
	case o.Writer == nil:
		return nil, errors.New("events: no writer")
	case o.Escape == nil:
		return nil, errors.New("events: no escape function for the prompt")
	}
	sched, err := clock.ParseCron(o.Config.RollupSchedule)
	if err != nil {
		return nil, fmt.Errorf("events: rollup schedule %q: %w", o.Config.RollupSchedule, err)
	}
	if o.AgentName == nil {
		o.AgentName = func() string { return "agent" }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Decay == (DecayLaw{}) {
		o.Decay = DefaultDecay
	}
	loc := o.Location
	if loc == nil {
		loc = o.Config.Location()
	}
	ws := time.Sunday
	if o.Config.WeekStart == "monday" {
		ws = time.Monday
	}
	silence := time.Duration(o.Config.TopicSilence)
	if silence <= 0 {
		silence = 30 * time.Minute
	}
	l := &Log{
		st: o.Store, db: postingDB{DB: o.Store.DB(), j: o.Store.Journal()}, cfg: o.Config, cal: calendar{loc: loc, weekStart: ws}, sched: sched,
		w: o.Writer, agent: o.AgentName, escape: o.Escape, isOwner: o.IsOwner, decay: o.Decay, silence: silence,
		ranges: o.HistoryRanges, theories: o.FindTheories,
		now: o.Now, log: o.Logger, kick: make(chan struct{}, 1),
		interval: min(max(silence/10, 5*time.Second), time.Minute),
	}
	if _, err := l.agentObject(o.Now()); err != nil {
		return nil, err
	}
	return l, nil
}

// Run keeps the log up to date until ctx ends: at start it catches up every
// topic and period missed while the daemon was down; then it closes silent
// topics and titles them every few seconds, and runs the rollups on the
// cron schedule (and at the retry time of a failed one).
func (l *Log) Run(ctx context.Context) error {
	full := true
	for {
		now := l.now()
		rep, err := l.Process(ctx, now, ProcessOptions{Rollups: full})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			l.log.Error("event log pass failed; will try again", "err", err)
		} else if rep.changed() {
			l.log.Info("event log updated", "closed", rep.Closed, "titled", rep.Titled, "extracted", rep.Extracted,
				"rollups", len(rep.Rollups), "failed", len(rep.Failed))
		}
		wait := l.sched.Next(now.In(l.cal.loc)).Sub(now)
		if retry, ok := l.nextRetry(); ok {
			wait = min(wait, max(retry.Sub(now), time.Second))
		}
		rollupAt := time.NewTimer(max(wait, time.Second))
		tick := time.NewTimer(l.interval)
		select {
		case <-ctx.Done():
			rollupAt.Stop()
			tick.Stop()
			return nil
		case <-rollupAt.C:
			full = true
		case <-l.kick:
			full = true
		case <-tick.C:
			full = false
		}
		rollupAt.Stop()
		tick.Stop()
	}
}

// Kick asks Run for a full pass (topics, titles and rollups) soon.
func (l *Log) Kick() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// ProcessOptions select the work of a pass.
type ProcessOptions struct {
	// Rollups runs every due day, week, month and year summary.
	Rollups bool
	// IgnoreBackoff retries failed steps now instead of at their retry time
	// (an explicit request by the owner).
	IgnoreBackoff bool
}

// Report is what a pass did.
type Report struct {
	Closed    int      `json:"closed"`    // topics closed into records
	Titled    int      `json:"titled"`    // records titled and scored
	Extracted int      `json:"extracted"` // records whose facts and lines were extracted
	Rollups   []string `json:"rollups"`   // rollup records written, as "level label (channel)"
	Failed    []string `json:"failed"`    // steps that failed and will be retried
	// Pending lists the rollups still due after a pass that ran them.
	Pending []PendingRollup `json:"pending"`
}

func (r *Report) changed() bool {
	return r.Closed+r.Titled+r.Extracted+len(r.Rollups)+len(r.Failed) > 0
}

// Process runs one pass as of now: it closes every topic silent since
// before now−topic_silence, titles and extracts from closed topics, and with
// Rollups, writes every due rollup. A step that fails is recorded on its
// record or period and retried by a later pass; Process itself fails only
// when the store does.
func (l *Log) Process(ctx context.Context, now time.Time, o ProcessOptions) (*Report, error) {
	l.work.Lock()
	defer l.work.Unlock()
	rep := &Report{Rollups: []string{}, Failed: []string{}}
	chans, err := l.st.Channels()
	if err != nil {
		return nil, err
	}
	for _, c := range chans {
		l.mu.Lock()
		closed, err := l.closeTopics(c.Name, now, "", false)
		l.mu.Unlock()
		if err != nil {
			return nil, err
		}
		rep.Closed += len(closed)
	}
	if err := l.processPending(ctx, now, o.IgnoreBackoff, rep); err != nil {
		return nil, err
	}
	rep.Pending = []PendingRollup{}
	if !o.Rollups {
		return rep, nil
	}
	if err := l.rollups(ctx, now, o.IgnoreBackoff, rep); err != nil {
		return nil, err
	}
	if rep.Pending, err = l.PendingRollups(now); err != nil {
		return nil, err
	}
	return rep, nil
}

// retry is the wait before a failed step runs again: retry n (1-based)
// waits Delay(n-1), 1m, 2m, 4m … up to 1h.
var retry = backoff.Policy{Base: time.Minute, Max: time.Hour}
