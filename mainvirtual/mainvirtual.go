package mainvirtual

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// Options configure New.
type Options struct {
	Store *store.Store
	LLM   llm.Client
	// Persona returns the current persona (the daemon swaps it on reload).
	Persona func() *persona.Persona
	// Tools offered to the model; nil offers none.
	Tools Tools
	// Limits polices the output and the tool calls; nil: none.
	Limits Limiter
	// Sources fill the system-prompt slots. The main prompt, the persona
	// reference, the persona's lorebook (its two slots) and the tool-call
	// area are built in; an entry here replaces the built-in one of its
	// slot.
	Sources map[turn.Slot]turn.Source
	// ContextStart bounds where the context begins; nil: no bound.
	ContextStart ContextStarter
	// Agent holds the budgets and the step bound.
	Agent config.Agent
	// Budgets sets the token budget of slots that config.Agent.Sections
	// does not hold (the workspace's is memory.budget), or overrides one.
	Budgets map[turn.Slot]int
	// Compressor shortens the agent's older messages once the context
	// outgrows its budget; nil drops them instead.
	Compressor Compressor
	// Images, if set, returns the pictures a user message's text refers to
	// ("%[images/…]"), for a model that accepts images: the messages the
	// turn answers (those after the agent's last answer) carry them, at most
	// MaxImages a turn. nil: images stay references.
	Images func(text string) []llm.Image
	// Temperature and MaxTokens are passed to every call (nil/0: provider
	// defaults).
	Temperature *float64
	MaxTokens   int
	// OpensThink says whether the model's chat template opens its
	// reasoning (llm.opens_think): "yes" holds every stream until its
	// "</think>"; "no" lets streams go out as they come until a bare
	// "</think>" shows otherwise; "auto" or "" holds a model's streams
	// until its first whole answer tells (expectThink). What an answer
	// showed and the store kept wins over "no".
	OpensThink string
	// Greeting, if set, gives what the agent says first in a channel that
	// has no message yet (a character card's first_mes): Turn stores it as
	// the channel's first message, before the incoming one. "" says
	// nothing; an error is logged and the turn goes on without it.
	Greeting func(q turn.Query) (string, error)
	// LiveText streams every turn from the provider and posts its text on
	// the journal as it comes (journal.ReplyDelta), so a voice or a page
	// can start before the reply is finished; without it only turns whose
	// Listener asks for Stream are streamed (and posted).
	LiveText bool
	// Window says the server's context window for the model (llm.Window;
	// the daemon asks the server, or takes llm.context_window). The
	// prompt is fitted to it: tools and system prompt counted, the
	// conversation gets what is left, then the pulled info and the
	// lorebook give way, and the packet's trace says what left. nil: only
	// a server's context-length error teaches a window.
	Window func(context.Context) llm.Window
	// Owner, if set, says whether a stored message's speaker is the owner
	// (the tools' owners: by platform id, or the local user); the owner's
	// lines are marked "^晴 (owner)" (notation.OwnerLine), so a stranger
	// with the owner's name never looks like the owner to the model. nil:
	// no line is marked.
	Owner   func(m *store.Message) bool
	Counter Counter          // nil: a TokenCounter
	Now     func() time.Time // nil: time.Now
	Logger  *slog.Logger     // nil: discard
}

// MainVirtual runs turns. Turns of one channel run one at a time, in the
// order they arrive; channels run in parallel.
type MainVirtual struct {
	store   *store.Store
	llm     llm.Client
	persona func() *persona.Persona
	tools   Tools
	limits  Limiter
	// thinks is set once an answer showed that the model's chat template
	// opens its reasoning (a bare "</think>"): its streams are held until
	// it. plain is set once a whole answer showed it does not: its streams
	// go out as they come. Until one is, a stream is held (expectThink).
	// Both are kept in facts, so a restart keeps them (learnThinks).
	thinks   atomic.Bool
	plain    atomic.Bool
	facts    *facts
	asm      *assembler
	steps    int
	temp     *float64
	maxTok   int
	count    Counter
	now      func() time.Time
	log      *slog.Logger
	locks    keyedMutex
	greetMu  sync.Mutex // Record's check for an empty channel and its greeting
	live     bool
	journal  *journal.Journal
	greeting func(turn.Query) (string, error)

	mu     sync.Mutex
	traces map[string]*turn.Trace // last trace per channel
}

// New checks the options and builds main-virtual.
func New(o Options) (*MainVirtual, error) {
	switch {
	case o.Store == nil:
		return nil, errors.New("mainvirtual: no store")
	case o.LLM == nil:
		return nil, errors.New("mainvirtual: no LLM client")
	case o.Persona == nil || o.Persona() == nil:
		return nil, errors.New("mainvirtual: no persona")
	}
	if o.Counter == nil {
		o.Counter = new(TokenCounter)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Tools == nil {
		o.Tools = noTools{}
	}
	steps := o.Agent.MaxToolSteps
	if steps < 1 {
		steps = 1
	}
	mv := &MainVirtual{
		store: o.Store, llm: o.LLM, persona: o.Persona, tools: o.Tools, limits: o.Limits, steps: steps,
		temp: o.Temperature, maxTok: o.MaxTokens, count: o.Counter, now: o.Now, log: o.Logger,
		traces: make(map[string]*turn.Trace), live: o.LiveText, journal: o.Store.Journal(),
		greeting: o.Greeting,
		facts:    &facts{store: o.Store, model: o.LLM.Describe(), log: o.Logger},
	}
	thinks, plain, window := mv.facts.load()
	switch o.OpensThink {
	case "yes":
		thinks, plain = true, false
	case "no":
		plain = !thinks
	}
	mv.thinks.Store(thinks)
	mv.plain.Store(plain)
	sources := map[turn.Slot]turn.Source{
		turn.SlotMain:      mainPrompt{o.Persona},
		turn.SlotReference: reference{o.Persona},
		turn.SlotToolCalls: toolCalls{o.Store},
	}
	s := o.Agent.Sections
	budgets := map[turn.Slot]int{
		turn.SlotMain: s.Main, turn.SlotReference: s.Reference, turn.SlotToolCalls: s.ToolCalls, turn.SlotEvents: s.Events,
		turn.SlotPulled: s.Pulled, turn.SlotPlans: s.Plans,
	}
	loreRoom, err := addLoreSources(sources, o.Persona, o.Store, o.Logger.With("component", "lorebook"), o.Agent,
		func(ctx context.Context) int { return mv.asm.serverWindow(ctx).tokens })
	if err != nil {
		return nil, err
	}
	for slot, src := range o.Sources {
		sources[slot] = src
	}
	for slot, b := range o.Budgets {
		budgets[slot] = b
	}
	mv.asm = &assembler{owner: o.Owner,
		store:      o.Store,
		sources:    sources,
		budgets:    budgets,
		loreRoom:   loreRoom,
		context:    o.Agent.ContextBudget,
		start:      o.ContextStart,
		count:      o.Counter,
		persona:    o.Persona,
		compressor: o.Compressor,
		compress:   o.Agent.Compress,
		images:     o.Images,
		log:        o.Logger,
		window:     o.Window,
		maxTokens:  o.MaxTokens,
		facts:      mv.facts,
		learned:    window,
		reported:   window.Reported,
	}
	return mv, nil
}

// AgentName is the current persona's name.
func (mv *MainVirtual) AgentName() string { return mv.persona().Name }

// LastTrace returns the last turn's trace of a channel: from memory, else
// from the store (the trace of a turn before a restart).
func (mv *MainVirtual) LastTrace(channel string) (*turn.Trace, error) {
	mv.mu.Lock()
	t := mv.traces[channel]
	mv.mu.Unlock()
	if t != nil {
		return t, nil
	}
	b, err := mv.store.Trace(channel)
	if err != nil {
		return nil, err
	}
	t = new(turn.Trace)
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("mainvirtual: stored trace of %s: %w", channel, err)
	}
	return t, nil
}

func (mv *MainVirtual) keepTrace(t *turn.Trace) {
	mv.mu.Lock()
	mv.traces[t.Channel] = t
	mv.mu.Unlock()
	b, err := json.Marshal(t)
	if err == nil {
		err = mv.store.PutTrace(t.Channel, b)
	}
	if err != nil {
		mv.log.Warn("keep trace", "channel", t.Channel, "err", err)
	}
}

type noTools struct{}

func (noTools) Offer(turn.Query) []llm.Tool { return nil }

// keyedMutex serialises work per key; entries live only while in use.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = make(map[string]*keyedEntry)
	}
	e := k.m[key]
	if e == nil {
		e = new(keyedEntry)
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}

func (noTools) Call(_ context.Context, _ turn.Query, call llm.ToolCall) turn.ToolResult {
	return turn.ToolResult{Text: fmt.Sprintf("there is no tool named %q", call.Name), IsError: true}
}
