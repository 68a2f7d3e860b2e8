package observer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/tools"
	"github.com/cyan-agent/cyan/turn"
)

// MainAccount is main-observer's budget account: its workspace work, due
// plans and proactive speech share it.
const MainAccount = "main-observer"

// Waker is main-virtual as observers wake it: a turn in channel on a
// "^system" line (note), acting for as.
type Waker interface {
	ProactiveAs(ctx context.Context, channel, kind, note string, as *turn.Principal, l turn.Listener) (*turn.Result, error)
}

// ScriptLibrary is the prompt scripts as observers use them: they call
// them (Scripts), and a persona observer's script must load and get the
// inputs it requires.
type ScriptLibrary interface {
	Scripts
	// Required names the inputs a script requires and has no default
	// for; an error when it does not load.
	Required(name string) ([]string, error)
}

// MainOptions configure NewMain.
type MainOptions struct {
	Manager *Manager
	Memory  *memory.Memory
	Store   *store.Store
	Scripts ScriptLibrary
	// Perms holds the owners and the components' permission objects.
	Perms  *tools.Registry
	Waker  Waker
	Agent  func() string // the persona's name
	Config config.Observers
	Logger *slog.Logger     // nil: discard
	Now    func() time.Time // nil: time.Now
}

// Main is main-observer and the persona's observers as the Manager runs
// them: the work after each turn (memory.AfterTurn, with the owner and
// private rule), one observer per deferred plan, self-decided speech in
// the configured channels, and the persona's declared observers, each
// under its own permission.
type Main struct {
	o MainOptions

	mu       sync.Mutex
	plans    map[string]string // plan id → its schedule, as registered
	declared map[string]bool   // names of the persona's observers
}

// NewMain checks the options.
func NewMain(o MainOptions) (*Main, error) {
	if o.Manager == nil || o.Memory == nil || o.Store == nil || o.Scripts == nil || o.Perms == nil || o.Waker == nil {
		return nil, errors.New("observer: main-observer needs a manager, memory, a store, scripts, permissions and main-virtual")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Agent == nil {
		o.Agent = func() string { return "" }
	}
	return &Main{o: o, plans: map[string]string{}}, nil
}

// TurnDone is what main-observer's after-turn work hands memory for the
// turn of ev: the owner is the one the turn named or a configured owner,
// a turn is private unless it was in a group.
func TurnDone(perms *tools.Registry, ev *Event) memory.TurnDone {
	t := ev.Turn
	return memory.TurnDone{Channel: ev.Channel, MessageID: t.MessageID, Answer: strings.Join(t.Replies, "\n"),
		Owner:    t.Owner || perms.IsOwner(packets.Caller{Channel: ev.Channel, Speaker: t.Speaker, SpeakerID: t.SpeakerID, Kind: t.Kind}),
		Private:  packets.Private(t.Kind),
		Reported: t.UsagePath, Used: t.Used, Maybe: t.Maybe}
}

// Builtins adds main-observer's parts: the work after each turn, the plan
// schedule, and (when channels are configured) self-decided speech.
func (m *Main) Builtins() error {
	specs := []Spec{{
		Name: MainAccount, Account: MainAccount, Budget: m.o.Config.MainBudget, AlwaysRun: true,
		Triggers: []Trigger{{On: AfterAIResponse}},
		Run: func(ctx context.Context, f Firing) error {
			if f.Event == nil || f.Event.Turn == nil {
				return nil // run by hand: its work follows a turn, and there is none
			}
			events, err := m.o.Memory.AfterTurn(ctx, TurnDone(m.o.Perms, f.Event))
			for _, e := range events {
				m.o.Logger.Info("workspace gc", "item", e.Item, "action", e.Action, "reason", e.Reason)
			}
			return err
		},
	}, {
		Name: MainAccount + "/plans", Account: MainAccount, AlwaysRun: true,
		Triggers: []Trigger{{On: MemoryChanged}, {On: AtStartup}},
		Run:      func(context.Context, Firing) error { return m.SyncPlans() },
	}}
	if len(m.o.Config.Speech.Channels) > 0 {
		decide, run := m.speaker(MainAccount+"/speech", ScriptSpeech, "", m.o.Config.Speech.Channels)
		m.o.Perms.SetComponent(Component(MainAccount+"/speech"), m.o.Perms.OwnerPermission())
		specs = append(specs, Spec{
			Name: MainAccount + "/speech", Account: MainAccount, Speaks: true,
			Triggers: []Trigger{{Every: time.Duration(m.o.Config.Speech.Every)}},
			Decide:   decide, Run: run,
		})
	}
	for _, s := range specs {
		if err := m.o.Manager.Add(s); err != nil {
			return err
		}
	}
	return nil
}

// SyncPlans keeps one observer per deferred plan ("plan:p3"), due at the
// plan's time or on its cron schedule.
func (m *Main) SyncPlans() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[string]memory.Plan{}
	for _, p := range m.o.Memory.Plans(memory.Viewer{}) {
		if p.Deferred() {
			want[p.ID] = p
		}
	}
	for id := range m.plans {
		if _, ok := want[id]; !ok {
			m.o.Manager.Remove("plan:" + id)
			delete(m.plans, id)
		}
	}
	for id, p := range want {
		sched := p.When()
		if m.plans[id] == sched {
			continue
		}
		tr := Trigger{Cron: p.Cron}
		if p.At != nil {
			tr = Trigger{At: *p.At}
		}
		plan := p
		err := m.o.Manager.Add(Spec{
			Name: "plan:" + id, Source: "plan", Account: MainAccount, Speaks: true, Hold: true,
			Triggers: []Trigger{tr},
			Run:      func(ctx context.Context, f Firing) error { return m.planDue(ctx, plan) },
		})
		if err != nil {
			m.o.Logger.Error("schedule plan", "plan", id, "err", err)
			continue
		}
		m.plans[id] = sched
	}
	return nil
}

// planDue wakes main-virtual in the plan's channel with a "^system" line
// saying the plan is due; it may speak first.
func (m *Main) planDue(ctx context.Context, p memory.Plan) error {
	note := PlanDueNote(p)
	// The plan's turn acts for its maker: a stranger's plan never gains the
	// owner's rights by firing (distribute_permission: at most the
	// creator's).
	// A plan a component made (an observer) fires under that component's
	// permission; when the component is gone, it does not fire at all.
	if c := p.Origin.Component; c != "" {
		if _, ok := m.o.Perms.Component(c); !ok {
			return fmt.Errorf("plan %s was made by %s, which is no longer loaded; it does not fire with anyone else's permission", p.ID, c)
		}
	}
	m.o.Store.Journal().Post(journal.New(journal.PlanDue, p.Origin.Channel, journal.Plan{ID: p.ID, Text: p.Text, When: p.When()}))
	maker := &turn.Principal{Speaker: p.Origin.Speaker, SpeakerID: p.Origin.SpeakerID, Owner: p.Origin.Owner, Component: p.Origin.Component}
	_, err := m.o.Waker.ProactiveAs(ctx, p.Origin.Channel, p.Origin.Kind, note, maker, turn.Listener{})
	if p.At != nil {
		if ferr := m.o.Memory.PlanFired(p.ID); ferr != nil && err == nil {
			err = ferr
		}
	}
	return err
}

// LoadDeclared replaces the persona's observers with those in its folder.
func (m *Main) LoadDeclared(personaDir string) {
	decls, errs := LoadDeclared(personaDir)
	for _, err := range errs {
		m.o.Logger.Error("persona observer not loaded", "err", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	keep := map[string]bool{}
	for _, d := range decls {
		name := ScriptDecide
		if d.Script != "" {
			if err := m.checkScript(d); err != nil {
				m.o.Logger.Error("persona observer not loaded", "file", d.File, "err", err)
				continue
			}
			name = d.Script
		}
		// Its permission: its own declared one (one of the starter's
		// distribute_permission presets, when it lists any), bounded by
		// its starter's — the owner's: the persona folder is the owner's.
		perm, err := m.o.Perms.OwnerPermission().Hand(d.Permission)
		if err != nil {
			m.o.Logger.Error("persona observer not loaded", "file", d.File, "err", err)
			continue
		}
		m.o.Perms.SetComponent(Component(d.Name), perm)
		decide, run := m.speaker(d.Name, name, d.Prompt, d.Channels)
		spec := Spec{
			Name: d.Name, Source: "persona", Triggers: d.Triggers, Budget: d.Budget, Quiet: d.Quiet,
			NoCatchUp: !d.CatchUp, Speaks: true, Decide: decide, Run: run,
		}
		if err := m.o.Manager.Add(spec); err != nil {
			m.o.Logger.Error("persona observer not loaded", "file", d.File, "err", err)
			continue
		}
		keep[d.Name] = true
	}
	for name := range m.declared {
		if !keep[name] {
			m.o.Manager.Remove(name)
			m.o.Perms.SetComponent(Component(name), nil)
		}
	}
	m.declared = keep
}

// checkScript reports whether a persona observer's script: loads and can
// run without a prompt: when the observer gives none.
func (m *Main) checkScript(d Declared) error {
	required, err := m.o.Scripts.Required(d.Script)
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	if slices.Contains(required, "instruction") && d.Prompt == "" {
		return fmt.Errorf("script %s needs an instruction: add prompt: to %s", d.Script, filepath.Base(d.File))
	}
	return nil
}

// speaker makes the decide and run functions of an observer that may
// speak first in channels: the prompt script called scriptName reads each
// channel's recent conversation (with instruction, when given, as its
// instruction input) and answers {speak, note}; main-virtual then speaks
// in its own voice. The observer reads only the channels its permission's
// infos let it see, and speaks under its own permission. The script runs
// with the firing's context, so its calls are metered to the observer's
// account and traced with the channel. A decision made by Decide
// (self-decided firings) is reused by the Run that follows it.
func (m *Main) speaker(name, scriptName, instruction string, channels []string) (func(context.Context, Firing) (bool, string, error), func(context.Context, Firing) error) {
	var mu sync.Mutex
	decided := map[string]string{} // channel → note, from the last Decide
	component := Component(name)
	ask := func(ctx context.Context, channel string) (bool, string, error) {
		r := m.o.Perms.Reader(packets.Caller{Owner: true, Process: component})
		if !r.MayRead(packets.InfoHistory, packets.Scope{Channel: channel}) {
			return false, "", fmt.Errorf("observer %s may not see channel %s (its permission's infos lack history:channel:%s)", name, channel, channel)
		}
		return Decider{Scripts: m.o.Scripts, Store: m.o.Store, AgentName: m.o.Agent, Now: m.o.Now}.Decide(ctx, name, scriptName, instruction, channel)
	}
	decide := func(ctx context.Context, _ Firing) (bool, string, error) {
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
	run := func(ctx context.Context, f Firing) error {
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
			m.o.Store.Journal().Post(journal.New(journal.ProactiveSpeech, ch, journal.Speech{Observer: name, Note: note}))
			as := &turn.Principal{Owner: true, Component: component}
			if _, err := m.o.Waker.ProactiveAs(ctx, ch, "", SpeechNote(name, note), as, turn.Listener{}); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", ch, err))
			}
		}
		return errors.Join(errs...)
	}
	return decide, run
}

// Component is an observer's process name, under which its own
// permission object is registered (tools.Registry.SetComponent).
func Component(name string) string { return "observer:" + name }
