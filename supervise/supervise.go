package supervise

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cyan-agent/cyan/backoff"
	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/journal"
)

// Part is one long-running piece of the daemon. Run blocks until ctx ends
// (then it returns nil) or it fails. A part that knows when it should run
// again says so with RetryAfter; one that has proved healthy during a run
// says so with Healthy(ctx).
type Part struct {
	Name string
	Run  func(ctx context.Context) error
}

type fatal struct{ err error }

func (f fatal) Error() string { return f.err.Error() }
func (f fatal) Unwrap() error { return f.err }

// Fatal marks an error after which the daemon cannot go on (a setting that
// is wrong, a resource it must have): the supervisor stops every part and
// Run returns it. Its message should say what to do.
func Fatal(err error) error { return fatal{err} }

type done struct{ err error }

func (d done) Error() string { return d.err.Error() }
func (d done) Unwrap() error { return d.err }

// Done marks the end of a part that cannot do its work but whose absence
// the daemon survives (a watcher the system does not allow): it is not
// restarted, and its state says why.
func Done(err error) error { return done{err} }

type retryAfter struct {
	err error
	d   time.Duration
}

func (r retryAfter) Error() string { return r.err.Error() }
func (r retryAfter) Unwrap() error { return r.err }

// RetryAfter marks a failure after which the part knows when it should
// run again: d after it, instead of after the supervisor's backoff (a
// server's retry-after; a schedule the part learned over several runs,
// as the OneBot dialer's waits that grow to minutes once the access token
// is refused). The failure still counts as one in a row, is the part's
// last error, and the part's state shows the time it starts again.
// RetryAfter(nil, d) is nil; a d below zero is zero.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return retryAfter{err: err, d: max(d, 0)}
}

// runKey finds the run of a part in its Run's context (Healthy).
type runKey struct{}

// run is one run of a part.
type run struct {
	s       *Supervisor
	name    string
	healthy atomic.Bool
}

// Healthy tells the supervisor running the part whose Run got ctx (or a
// context made from it) that the part has proved healthy in this run: a
// connection that logged in and heard from its peer. Its last error is
// cleared, and its next failure starts the backoff over, however short
// this run turns out. Outside a supervised part it does nothing.
func Healthy(ctx context.Context) {
	r, _ := ctx.Value(runKey{}).(*run)
	if r == nil || r.healthy.Swap(true) {
		return
	}
	r.s.set(r.name, func(st *State) {
		if st.State == Running {
			st.LastError = ""
		}
	})
}

// FatalError is what Run returns when a part failed fatally.
type FatalError struct {
	Part string
	Err  error
}

func (e *FatalError) Error() string {
	return fmt.Sprintf("part %s failed and the daemon cannot go on without it: %v", e.Part, e.Err)
}

func (e *FatalError) Unwrap() error { return e.Err }

// States of a part. A part is Starting from Add until its first run
// begins, so a reader never takes a part that has not run yet for one
// that stopped.
const (
	Starting   = "starting"
	Running    = "running"
	Restarting = "restarting"
	Stopped    = "stopped"
	Failed     = "failed"
)

// State is a part as /healthz shows it.
type State struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Restarts counts the restarts since the daemon started.
	Restarts int `json:"restarts,omitempty"`
	// LastError is the error of its last failure (kept while it runs
	// again, until the part says it is Healthy).
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since"`
	// Retry is when a restarting part starts again: after the
	// supervisor's backoff, or the wait the part asked for (RetryAfter).
	Retry time.Time `json:"retry,omitzero"`
}

// Options configure New.
type Options struct {
	// Backoff is the wait before restart n of a part failing in a row
	// (default 1 s doubling to 1 min).
	Backoff backoff.Policy
	// Healthy is how long a run must last for the next failure to start
	// the backoff over (default 1 min), for a part that does not say so
	// itself (Healthy).
	Healthy time.Duration
	Journal *journal.Journal // states are posted here (nil: none)
	// Clock times the states and the waits between runs (nil: the wall
	// clock), so a test advances time instead of sleeping.
	Clock  clock.Clock
	Logger *slog.Logger // nil: discard
}

// Supervisor runs parts.
type Supervisor struct {
	o     Options
	log   *slog.Logger
	parts []Part

	mu     sync.Mutex
	states map[string]*State
}

// New makes a supervisor; Add the parts, then Run.
func New(o Options) *Supervisor {
	if o.Backoff.Base == 0 {
		o.Backoff = backoff.Policy{Base: time.Second, Max: time.Minute}
	}
	if o.Healthy == 0 {
		o.Healthy = time.Minute
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{o: o, log: o.Logger, states: map[string]*State{}}
}

// Add adds a part (before Run).
func (s *Supervisor) Add(p Part) {
	s.parts = append(s.parts, p)
	s.mu.Lock()
	s.states[p.Name] = &State{Name: p.Name, State: Starting, Since: s.o.Clock.Now()}
	s.mu.Unlock()
}

// Run runs every part until ctx ends, restarting those that fail; then it
// waits for them and returns nil. When a part fails fatally it stops the
// others and returns a *FatalError.
func (s *Supervisor) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for _, p := range s.parts {
		wg.Go(func() { s.keep(ctx, cancel, p) })
	}
	wg.Wait()
	var fe *FatalError
	if errors.As(context.Cause(ctx), &fe) {
		return fe
	}
	return nil
}

// keep runs one part until ctx ends, restarting it with backoff.
func (s *Supervisor) keep(ctx context.Context, stopAll context.CancelCauseFunc, p Part) {
	failures := 0
	for {
		s.set(p.Name, func(st *State) { st.State, st.Retry = Running, time.Time{} })
		began := s.o.Clock.Now()
		r := &run{s: s, name: p.Name}
		err := s.run(context.WithValue(ctx, runKey{}, r), p)
		if ctx.Err() != nil {
			s.set(p.Name, func(st *State) { st.State = Stopped })
			return
		}
		var f fatal
		var d done
		switch {
		case errors.As(err, &f):
			s.log.Error("part failed; stopping the daemon", "part", p.Name, "err", f.err)
			s.set(p.Name, func(st *State) { st.State, st.LastError = Failed, f.err.Error() })
			stopAll(&FatalError{Part: p.Name, Err: f.err})
			return
		case err == nil:
			s.set(p.Name, func(st *State) { st.State = Stopped })
			return
		case errors.As(err, &d):
			s.log.Warn("part stopped", "part", p.Name, "reason", d.err)
			s.set(p.Name, func(st *State) { st.State, st.LastError = Stopped, d.err.Error() })
			return
		}
		if r.healthy.Load() || s.o.Clock.Now().Sub(began) >= s.o.Healthy {
			failures = 0
		}
		wait := s.o.Backoff.Delay(failures)
		var ra retryAfter
		if errors.As(err, &ra) {
			wait = ra.d
		}
		failures++
		s.log.Error("part failed; restarting", "part", p.Name, "err", err, "in", wait, "failures_in_a_row", failures)
		s.set(p.Name, func(st *State) {
			st.State, st.LastError, st.Retry = Restarting, err.Error(), s.o.Clock.Now().Add(wait)
			st.Restarts++
		})
		if clock.Sleep(ctx, s.o.Clock, wait) != nil {
			s.set(p.Name, func(st *State) { st.State = Stopped })
			return
		}
	}
}

// run runs a part once; a panic is its failure.
func (s *Supervisor) run(ctx context.Context, p Part) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("part panicked", "part", p.Name, "panic", v, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return p.Run(ctx)
}

func (s *Supervisor) set(name string, change func(*State)) {
	s.mu.Lock()
	st := s.states[name]
	before := st.State
	change(st)
	if st.State != before {
		st.Since = s.o.Clock.Now()
	}
	snap := *st
	s.mu.Unlock()
	if snap.State != before {
		s.o.Journal.Post(journal.New(journal.PartState, "", journal.State{Name: snap.Name, State: snap.State, Error: snap.LastError}))
	}
}

// Status lists the parts in the order they were added.
func (s *Supervisor) Status() []State {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]State, 0, len(s.parts))
	for _, p := range s.parts {
		out = append(out, *s.states[p.Name])
	}
	return out
}
