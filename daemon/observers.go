package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/observer"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/script"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/tools"
	"github.com/cyan-agent/cyan/turn"
)

// mainAccount is main-observer's budget account: its workspace work, due
// plans and proactive speech share it.
const mainAccount = "main-observer"

// observers declares the built-in observers, keeps deferred plans
// scheduled, and (re)loads the persona's own observers.
type observers struct {
	m       *observer.Manager
	mem     *memory.Memory
	mv      *mainvirtual.MainVirtual
	store   *store.Store
	scripts *script.Library
	reg     *tools.Registry // components' permission objects
	agent   func() string   // the persona's name
	cfg     config.Observers
	log     *slog.Logger
	now     func() time.Time

	mu       sync.Mutex
	plans    map[string]string // plan id → its schedule, as registered
	declared map[string]bool   // names of the persona's observers
}

// builtins adds main-observer's parts: the work after each turn, the plan
// schedule, and (when channels are configured) self-decided speech.
func (o *observers) builtins() error {
	specs := []observer.Spec{{
		Name: mainAccount, Account: mainAccount, Budget: o.cfg.MainBudget, AlwaysRun: true,
		Triggers: []observer.Trigger{{On: observer.AfterAIResponse}},
		Run: func(ctx context.Context, f observer.Firing) error {
			if f.Event == nil || f.Event.Turn == nil {
				return nil // run by hand: its work follows a turn, and there is none
			}
			t := f.Event.Turn
			d := memory.TurnDone{Channel: f.Event.Channel, MessageID: t.MessageID, Answer: strings.Join(t.Replies, "\n"),
				Owner:    t.Owner || o.reg.IsOwner(packets.Caller{Channel: f.Event.Channel, Speaker: t.Speaker, SpeakerID: t.SpeakerID, Kind: t.Kind}),
				Private:  t.Kind != turn.KindGroup,
				Reported: t.UsagePath, Used: t.Used, Maybe: t.Maybe}
			events, err := o.mem.AfterTurn(ctx, d)
			for _, e := range events {
				o.log.Info("workspace gc", "item", e.Item, "action", e.Action, "reason", e.Reason)
			}
			return err
		},
	}, {
		Name: mainAccount + "/plans", Account: mainAccount, AlwaysRun: true,
		Triggers: []observer.Trigger{{On: observer.MemoryChanged}, {On: observer.AtStartup}},
		Run:      func(context.Context, observer.Firing) error { return o.syncPlans() },
	}}
	if len(o.cfg.Speech.Channels) > 0 {
		decide, run := o.speaker(mainAccount+"/speech", ScriptObserverSpeech, "", o.cfg.Speech.Channels)
		o.reg.SetComponent(observerComponent(mainAccount+"/speech"), o.reg.OwnerPermission())
		specs = append(specs, observer.Spec{
			Name: mainAccount + "/speech", Account: mainAccount, Speaks: true,
			Triggers: []observer.Trigger{{Every: time.Duration(o.cfg.Speech.Every)}},
			Decide:   decide, Run: run,
		})
	}
	for _, s := range specs {
		if err := o.m.Add(s); err != nil {
			return err
		}
	}
	return nil
}

// syncPlans keeps one observer per deferred plan ("plan:p3"), due at the
// plan's time or on its cron schedule.
func (o *observers) syncPlans() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	want := map[string]memory.Plan{}
	for _, p := range o.mem.Plans(memory.Viewer{}) {
		if p.Deferred() {
			want[p.ID] = p
		}
	}
	for id := range o.plans {
		if _, ok := want[id]; !ok {
			o.m.Remove("plan:" + id)
			delete(o.plans, id)
		}
	}
	for id, p := range want {
		sched := p.When()
		if o.plans[id] == sched {
			continue
		}
		tr := observer.Trigger{Cron: p.Cron}
		if p.At != nil {
			tr = observer.Trigger{At: *p.At}
		}
		plan := p
		err := o.m.Add(observer.Spec{
			Name: "plan:" + id, Source: "plan", Account: mainAccount, Speaks: true, Hold: true,
			Triggers: []observer.Trigger{tr},
			Run:      func(ctx context.Context, f observer.Firing) error { return o.planDue(ctx, plan) },
		})
		if err != nil {
			o.log.Error("schedule plan", "plan", id, "err", err)
			continue
		}
		o.plans[id] = sched
	}
	return nil
}

// planDue wakes main-virtual in the plan's channel with a "^system" line
// saying the plan is due; it may speak first.
func (o *observers) planDue(ctx context.Context, p memory.Plan) error {
	note := observer.PlanDueNote(p)
	// The plan's turn acts for its maker: a stranger's plan never gains the
	// owner's rights by firing (distribute_permission: at most the
	// creator's).
	// A plan a component made (an observer) fires under that component's
	// permission; when the component is gone, it does not fire at all.
	if c := p.Origin.Component; c != "" {
		if _, ok := o.reg.Component(c); !ok {
			return fmt.Errorf("plan %s was made by %s, which is no longer loaded; it does not fire with anyone else's permission", p.ID, c)
		}
	}
	o.store.Journal().Post(journal.New(journal.PlanDue, p.Origin.Channel, journal.Plan{ID: p.ID, Text: p.Text, When: p.When()}))
	maker := &turn.Principal{Speaker: p.Origin.Speaker, SpeakerID: p.Origin.SpeakerID, Owner: p.Origin.Owner, Component: p.Origin.Component}
	_, err := o.mv.ProactiveAs(ctx, p.Origin.Channel, p.Origin.Kind, note, maker, turn.Listener{})
	if p.At != nil {
		if ferr := o.mem.PlanFired(p.ID); ferr != nil && err == nil {
			err = ferr
		}
	}
	return err
}

// loadDeclared replaces the persona's observers with those in its folder.
func (o *observers) loadDeclared(personaDir string) {
	decls, errs := observer.LoadDeclared(personaDir)
	for _, err := range errs {
		o.log.Error("persona observer not loaded", "err", err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	keep := map[string]bool{}
	for _, d := range decls {
		name := ScriptObserverDecide
		if d.Script != "" {
			if err := o.checkScript(d); err != nil {
				o.log.Error("persona observer not loaded", "file", d.File, "err", err)
				continue
			}
			name = d.Script
		}
		// Its permission: its own declared one (one of the starter's
		// distribute_permission presets, when it lists any), bounded by
		// its starter's — the owner's: the persona folder is the owner's.
		perm, err := o.reg.OwnerPermission().Hand(d.Permission)
		if err != nil {
			o.log.Error("persona observer not loaded", "file", d.File, "err", err)
			continue
		}
		o.reg.SetComponent(observerComponent(d.Name), perm)
		decide, run := o.speaker(d.Name, name, d.Prompt, d.Channels)
		spec := observer.Spec{
			Name: d.Name, Source: "persona", Triggers: d.Triggers, Budget: d.Budget, Quiet: d.Quiet,
			NoCatchUp: !d.CatchUp, Speaks: true, Decide: decide, Run: run,
		}
		if err := o.m.Add(spec); err != nil {
			o.log.Error("persona observer not loaded", "file", d.File, "err", err)
			continue
		}
		keep[d.Name] = true
	}
	for name := range o.declared {
		if !keep[name] {
			o.m.Remove(name)
			o.reg.SetComponent(observerComponent(name), nil)
		}
	}
	o.declared = keep
}

// The prompt scripts observers decide with (built in; a persona's
// scripts/ folder may override each).
const (
	// ScriptObserverDecide runs a persona observer's prompt: as its
	// instruction.
	ScriptObserverDecide = observer.ScriptDecide
	// ScriptObserverSpeech is main-observer's self-decided speech.
	ScriptObserverSpeech = observer.ScriptSpeech
)

// checkScript reports whether a persona observer's script: loads and can
// run without a prompt: when the observer gives none.
func (o *observers) checkScript(d observer.Declared) error {
	s, err := o.scripts.Load(d.Script)
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	for _, in := range s.Inputs {
		if in.Name == "instruction" && in.Required && !in.HasDefault && d.Prompt == "" {
			return fmt.Errorf("script %s needs an instruction: add prompt: to %s", d.Script, filepath.Base(d.File))
		}
	}
	return nil
}

// speaker makes the decide and run functions of an observer that may
// speak first in channels: the prompt script called scriptName reads each
// channel's recent conversation (with instruction, when given, as its
// instruction input) and answers {speak, note}; main-virtual then speaks
// in its own voice. The script runs with the firing's context, so its
// calls are metered to the observer's account and traced with the
// channel. A decision made by Decide (self-decided firings) is reused by
// the Run that follows it.
func (o *observers) speaker(name, scriptName, instruction string, channels []string) (func(context.Context, observer.Firing) (bool, string, error), func(context.Context, observer.Firing) error) {
	var mu sync.Mutex
	decided := map[string]string{} // channel → note, from the last Decide
	component := observerComponent(name)
	ask := func(ctx context.Context, channel string) (bool, string, error) {
		// Its vision scope: it reads only the channels its permission's
		// infos let it see.
		r := o.reg.Reader(packets.Caller{Owner: true, Process: component})
		if !r.MayRead(packets.InfoHistory, packets.Scope{Channel: channel}) {
			return false, "", fmt.Errorf("observer %s may not see channel %s (its permission's infos lack history:channel:%s)", name, channel, channel)
		}
		return observer.Decider{Scripts: o.scripts, Store: o.store, AgentName: o.agent, Now: o.now}.Decide(ctx, name, scriptName, instruction, channel)
	}
	decide := func(ctx context.Context, _ observer.Firing) (bool, string, error) {
		mu.Lock()
		defer mu.Unlock()
		clear(decided)
		for _, ch := range channels {
			speak, note, err := ask(ctx, ch)
			if err != nil {
				return false, "", err
			}
			if speak {
				decided[ch] = note
			}
		}
		if len(decided) == 0 {
			return false, "nothing worth saying now", nil
		}
		return true, "", nil
	}
	run := func(ctx context.Context, f observer.Firing) error {
		mu.Lock()
		notes := map[string]string{}
		for k, v := range decided {
			notes[k] = v
		}
		clear(decided)
		mu.Unlock()
		if len(notes) == 0 { // fired by time, an event or a call: decide now
			for _, ch := range channels {
				speak, note, err := ask(ctx, ch)
				if err != nil {
					return err
				}
				if speak {
					notes[ch] = note
				}
			}
		}
		var errs []error
		for ch, note := range notes {
			o.store.Journal().Post(journal.New(journal.ProactiveSpeech, ch, journal.Speech{Observer: name, Note: note}))
			text := observer.SpeechNote(name, note)
			as := &turn.Principal{Owner: true, Component: component}
			if _, err := o.mv.ProactiveAs(ctx, ch, "", text, as, turn.Listener{}); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", ch, err))
			}
		}
		return errors.Join(errs...)
	}
	return decide, run
}

// observerComponent is an observer's process name, under which its own
// permission object is registered (tools.Registry.SetComponent).
func observerComponent(name string) string { return "observer:" + name }
