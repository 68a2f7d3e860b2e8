package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/limitproc"
	"github.com/cyan-agent/cyan/metrics"
	"github.com/cyan-agent/cyan/tools"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/backoff"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/observer"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/script"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/supervise"
	"github.com/cyan-agent/cyan/tts"
	"github.com/cyan-agent/cyan/turn"
	"github.com/cyan-agent/cyan/web"
)

// TokenFile is the bearer token's file in the data dir (mode 0600).
const TokenFile = "api-token"

// ShutdownTimeout is the default bound of a shutdown (config
// shutdown_timeout).
const ShutdownTimeout = config.DefaultShutdownTimeout

// Options configure New.
type Options struct {
	Config  *config.Config
	Logger  *slog.Logger // nil: discard
	Version string
	// Clock is the time of every part: the schedules of the observers and
	// their budget windows wait on it, everything else reads Now (nil:
	// the wall clock). Tests pass a settable one.
	Clock clock.Clock
	// Ready, if set, is called with the listen address once the API answers.
	Ready func(addr net.Addr)
}

// windowTTL is how often the server is asked its window again.
const windowTTL = 5 * time.Minute

// Daemon is the whole of one running cyan: the System of its parts.
type Daemon struct {
	cfg   *config.Config
	log   *slog.Logger // the daemon's own (component=daemon)
	root  *slog.Logger // the parts get theirs from it
	store *store.Store
	llm   llm.Client
	model *llm.Watched
	// window is the server's context window, as turns fit their prompts.
	window  func(context.Context) llm.Window
	persona atomic.Pointer[persona.Persona]
	events  *events.Log
	gen     *generate.Generator
	scripts *script.Library
	mv      *mainvirtual.MainVirtual
	mem     *memory.Memory
	obs     *observers
	router  *router.Router
	tools   *toolParts
	recall  *recall.Index
	imports *events.Imports
	bridges *bridgeParts
	sup     *supervise.Supervisor
	extra   []supervise.Part // parts added by tests
	restart backoff.Policy   // the supervisor's (zero: its default)
	voice   *tts.Voice
	// encoder makes the bridges' OGG/Opus voice messages (found at start).
	encoder tts.Encoder
	// bridgeMode is tts.bridge_mode.
	bridgeMode string
	api        *api.Server
	token      string
	ready      func(net.Addr)
	mu         sync.Mutex // guards sup
	now        func() time.Time
	clock      clock.Clock // the supervisor's waits
	metrics    *metrics.Metrics
}

// New opens the store and builds every part. It fails fast, with advice,
// on a data dir in use, a broken persona or a bad LLM setting.
func New(o Options) (*Daemon, error) {
	cfg := o.Config
	if cfg == nil {
		return nil, errors.New("daemon: no configuration")
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	clk := o.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	now := clk.Now
	d := &Daemon{cfg: cfg, log: log.With("component", "daemon"), root: log, ready: o.Ready, now: now, clock: clk}

	p, err := loadPersona(cfg.Persona)
	if err != nil {
		return nil, err
	}
	d.persona.Store(p)

	client, err := llm.New(llm.Options{
		Provider: cfg.LLM.Provider, BaseURL: cfg.LLM.BaseURL, Model: cfg.LLM.Model, APIKey: cfg.LLM.APIKey,
		Timeout: cfg.LLM.TimeoutDuration(), MaxRetries: cfg.LLM.Retries(), Logger: log.With("component", "llm"),
		FirstByteTimeout: time.Duration(cfg.LLM.FirstByteTimeout), ThinkOff: cfg.LLM.ThinkOff, Now: now,
	})
	if err != nil {
		return nil, err
	}
	d.window = llm.WindowSource(client, cfg.LLM.Model, cfg.LLM.ContextWindow, windowTTL, now)
	d.metrics = metrics.New()
	client = d.metrics.LLM(client, cfg.LLM.Provider, observer.AccountOf)
	d.model = llm.Watch(client, now) // for /healthz
	client = d.model
	d.llm = client

	if !config.Loopback(cfg.Addr) {
		tok, err := loadToken(filepath.Join(cfg.DataDir, TokenFile))
		if err != nil {
			return nil, err
		}
		d.token = tok
	}

	st, err := store.Open(store.Options{Dir: cfg.DataDir, Logger: log.With("component", "store"), Now: now, MinFree: uint64(cfg.Store.MinFreeMB) << 20, MemoryMB: cfg.Store.MemoryMB})
	if err != nil {
		return nil, err
	}
	d.store = st
	d.metrics.Store(st)

	if err := d.build(cfg, client, o.Version, clk, log); err != nil {
		if d.tools != nil {
			d.tools.paths.Close()
		}
		_ = st.Close()
		return nil, err
	}
	return d, nil
}

// build makes the parts on top of the store, in dependency order. Every
// LLM caller gets the metered client: a call made for an observer is
// charged to its budget; foreground turns are not.
func (d *Daemon) build(cfg *config.Config, client llm.Client, version string, clk clock.Clock, log *slog.Logger) error {
	st, now := d.store, clk.Now
	quiet, err := observer.ParseQuietHours(cfg.Observers.QuietHours)
	if err != nil {
		return err
	}
	load, save := observer.StoreBudgets(st)
	gov := observer.NewGovernor(clk, cfg.Observers.Budget, load, save)
	metered := observer.Meter(client, gov)
	manager := observer.NewManager(observer.Options{Store: st, Clock: clk, Governor: gov, Quiet: quiet, Logger: log.With("component", "observer")})
	if d.router, err = router.Open(router.Options{DB: st.DB(), Prefix: store.PrefixRouter, Journal: st.Journal(), Now: now,
		Logger: log.With("component", "router")}); err != nil {
		return err
	}

	// Prompt scripts: every generate call is traced in a ring in the store;
	// the persona's scripts/ override the built-in ones.
	counter := new(mainvirtual.TokenCounter)
	traces, err := generate.OpenTraces(st, cfg.Generate.Traces)
	if err != nil {
		return err
	}
	d.gen, err = generate.New(generate.Options{LLM: metered, Traces: traces, Count: counter.Count, Now: now,
		Logger: log.With("component", "generate")})
	if err != nil {
		return err
	}
	d.scripts, err = script.NewLibrary(script.LibraryOptions{Generator: d.gen,
		PersonaDir: func() string { return d.persona.Load().Dir }, Logger: log.With("component", "script")})
	if err != nil {
		return err
	}
	d.checkScripts()
	agentName := func() string { return d.persona.Load().Name }
	var compressor mainvirtual.Compressor
	if cfg.Agent.Compress.Enabled {
		if _, err := d.scripts.Load(script.CompressScript); err != nil {
			return fmt.Errorf("daemon: the %s script: %w (fix it, or set agent.compress.enabled: false)", script.CompressScript, err)
		}
		compressor = d.scripts
	}

	d.mem, err = memory.Open(memory.Options{
		Store: st, Config: cfg.Memory, Natural: d.scripts, AgentName: agentName, Now: now,
		Logger: log.With("component", "memory"), Count: counter.Count,
	})
	if err != nil {
		return err
	}
	d.events, err = events.New(events.Options{
		Store: st, Config: cfg.Events, Writer: events.NewScriptWriter(d.scripts),
		AgentName: agentName, Escape: notation.Escape,
		IsOwner: func(speaker, userID string, private bool) bool {
			kind := turn.KindGroup
			if private {
				kind = turn.KindPrivate
			}
			return d.tools != nil && d.tools.reg.IsOwner(packets.Caller{Speaker: speaker, SpeakerID: userID, Kind: kind})
		},
		// The recall index is built next, over this log's records; it numbers
		// the history and finds the theories a topic touches.
		HistoryRanges: func(ctx context.Context, channel string, runs []events.Run) ([][]string, error) {
			return historyRanges(ctx, d.recall, channel, runs)
		},
		FindTheories: func(ctx context.Context, q events.TheoryQuery) ([]events.TheoryMatch, error) {
			return findTheories(ctx, d.recall, q)
		},
		Now: now, Logger: log.With("component", "events"),
	})
	if err != nil {
		return err
	}
	gov.SetBudget(eventsAccount, cfg.Observers.EventsBudget)
	d.imports = d.events.NewImports(log.With("component", "import"))
	if d.recall, err = newRecall(cfg, st, d.scripts, d.events, log); err != nil {
		return err
	}
	if d.tools, err = d.buildTools(cfg, version); err != nil {
		return err
	}
	d.tools.enableApprovals(d, time.Duration(cfg.Permissions.ApprovalTTL), now)
	if err := d.buildVoice(cfg.TTS, log.With("component", "voice")); err != nil {
		return err
	}
	sources := d.mem.Sources(d.tools.reg.Resolve)
	var theories turn.Source
	sources[turn.SlotEvents], theories = d.events.Sources(d.tools.reg.Reader)
	sources[turn.SlotPulled] = mainvirtual.Stack(theories, sources[turn.SlotPulled])
	budgets := map[turn.Slot]int{turn.SlotWorkspace: cfg.Memory.Budget}

	d.mv, err = mainvirtual.New(mainvirtual.Options{
		Store: st, LLM: metered, Persona: d.persona.Load, Agent: cfg.Agent,
		Tools:   tools.Turns{Registry: d.tools.reg, Count: d.metrics.ToolCall},
		Limits:  limitproc.Turns{Chain: d.tools.limits, Now: now},
		Sources: sources, ContextStart: resetStart{inner: d.events, store: st}, Compressor: compressor,
		Budgets:  budgets,
		LiveText: true,
		Greeting: mainvirtual.PersonaGreeting(d.persona.Load),
		Owner: func(m *store.Message) bool { // by id, as the tools' rules: "^晴 (owner)"
			return d.tools.reg.IsOwner(packets.Caller{Speaker: m.User, SpeakerID: m.UserID, Kind: m.Kind})
		},
		Images:      visionImages(cfg),
		Temperature: cfg.LLM.Temperature, MaxTokens: cfg.LLM.MaxTokens,
		Counter: counter, Now: now, Logger: log.With("component", "mainvirtual"),
		Window: d.window, OpensThink: cfg.LLM.OpensThink,
	})
	if err != nil {
		return err
	}

	if d.obs, err = d.buildObservers(manager, cfg, agentName, now, log); err != nil {
		return err
	}
	if err := d.obs.main.Builtins(); err != nil {
		return err
	}
	if cfg.Persona != "" {
		d.obs.main.LoadDeclared(cfg.Persona)
	}

	d.watchParts(d.metrics, now)
	if p := d.backups(version, clk); p != nil {
		d.extra = append(d.extra, *p)
	}
	if d.bridges, err = d.buildBridges(cfg, clk, log); err != nil {
		return err
	}
	d.api, err = api.New(api.Options{
		Agent: d.mv, Store: st, Memory: d.mem, Events: d.events, Observers: manager, Traces: d.gen.Traces(),
		Tools: d.tools.reg, Extras: d.tools.extras, MCP: d.tools.mcp,
		Recall: d.recall, Bridges: d.bridges, Mount: d.bridges.mount(), Doors: d.bridges.doors(),
		Voice: d.voice, Page: web.Handler(), PagePaths: web.Paths(), Persona: d.personaInfo, ConfigFile: configFile(cfg), LLM: d.llm, LLMModel: cfg.LLM.Model,
		PromptSize: func(ctx context.Context) (int, string) {
			return d.mv.PromptSize(ctx, turn.Query{Channel: "doctor", Speaker: "local", Kind: turn.KindPrivate, Now: now()})
		},
		Token: d.token, CheckHost: d.token == "",
		AllowedHosts: cfg.API.AllowedHosts, MaxBodyBytes: int64(cfg.API.MaxBodyBytes),
		AllowedOrigins: cfg.API.AllowedOrigins,
		Parts:          partStates{d}, Components: d.router, Model: d.model,
		Version: version, Logger: log.With("component", "api"), Now: now,
		Metrics: d.metrics,
	})
	return err
}

// Router is the daemon's router: a component (a bridge, a voice, the
// page) subscribes there and attaches to receive the outgoing packets of
// its channels.
func (d *Daemon) Router() *router.Router { return d.router }

// Run serves until ctx ends or a part fails, then shuts everything down and
// closes the store. It returns nil after a clean stop.
func (d *Daemon) Run(ctx context.Context) error {
	limit := time.Duration(d.cfg.ShutdownTimeout)
	ln, err := net.Listen("tcp", d.cfg.Addr)
	if err != nil {
		d.tools.paths.Close()
		return errors.Join(listenError(d.cfg.Addr, err), d.closeStore(time.Now().Add(limit)))
	}
	sup := d.parts(ln)
	began, err := runBounded(ctx, sup.Run, func() []string {
		var left []string
		for _, st := range sup.Status() {
			if st.State != supervise.Stopped && st.State != supervise.Failed {
				left = append(left, st.Name)
			}
		}
		return left
	}, share(limit, partsShare), d.log)
	if err != nil {
		d.log.Error("stopping", "err", err)
	}
	d.tools.paths.Close()
	err = errors.Join(err, d.closeStore(began.Add(limit-closeMargin)))
	if err == nil {
		d.log.Info("stopped", "took", time.Since(began).Round(time.Millisecond))
	}
	return err
}

// serve runs the HTTP server. On shutdown it stops taking requests and gives
// those in flight a share of shutdown_timeout; then it cancels them (their
// LLM calls end, their incoming messages are already stored, and a retry
// with the same idempotency key answers them) and closes.
func (d *Daemon) serve(ctx context.Context, ln net.Listener) error {
	handlerCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	srv := api.HTTPServer(d.api, api.Timeouts{ReadHeader: time.Duration(d.cfg.API.ReadHeaderTimeout),
		Read: time.Duration(d.cfg.API.ReadTimeout), Idle: time.Duration(d.cfg.API.IdleTimeout)})
	srv.BaseContext = func(net.Listener) context.Context { return handlerCtx }
	srv.ErrorLog = slog.NewLogLogger(d.log.Handler(), slog.LevelWarn)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	d.log.Info("listening", "addr", ln.Addr().String(), "data_dir", d.cfg.DataDir,
		"llm", d.llm.Describe(), "persona", d.persona.Load().Name, "token_required", d.token != "")
	if d.ready != nil {
		d.ready(ln.Addr())
	}
	select {
	case err := <-errc:
		return supervise.Fatal(fmt.Errorf("the HTTP server stopped: %w", err))
	case <-ctx.Done():
	}
	d.log.Info("shutting down")
	d.api.Close() // end the streams, so they do not hold the shutdown
	limit := time.Duration(d.cfg.ShutdownTimeout)
	graceful, cancel := context.WithTimeout(context.Background(), share(limit, httpGraceShare))
	defer cancel()
	if err := srv.Shutdown(graceful); err != nil {
		d.log.Warn("requests still running at the deadline; cancelling them", "err", err)
		abort()
		go d.api.StopTurns() // and the turns that outlive their clients
		hard, cancel2 := context.WithTimeout(context.Background(), share(limit, httpHardShare))
		defer cancel2()
		if err := srv.Shutdown(hard); err != nil {
			_ = srv.Close()
		}
	}
	<-errc
	d.api.StopTurns() // the streamed turns whose clients went away
	return nil
}

// watchPersona reloads the persona folder when it changes; a broken edit is
// logged and the previous persona stays in use.
func (d *Daemon) watchPersona(ctx context.Context) error {
	err := persona.Watch(ctx, d.cfg.Persona, func(p *persona.Persona, err error) {
		if err != nil {
			d.log.Error("persona reload failed; keeping the previous one", "err", err)
			return
		}
		d.persona.Store(p)
		d.log.Info("persona reloaded", "name", p.Name)
		d.checkScripts()
		d.obs.main.LoadDeclared(d.cfg.Persona)
	})
	if err != nil {
		return supervise.Done(fmt.Errorf("persona changes are not picked up until a restart: %w", err))
	}
	return nil
}

// checkLLM asks the provider once, at start, whether it answers, so a
// missing Ollama shows in the log before the first message does.
func (d *Daemon) checkLLM(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	models, err := d.llm.Models(cctx)
	cancel()
	switch {
	case ctx.Err() != nil:
	case err != nil:
		d.log.Warn("the LLM does not answer yet; messages are kept, but answers will fail until it does (cyan doctor explains)", "err", err)
	default:
		found := false
		for _, m := range models {
			if m == d.cfg.LLM.Model || strings.TrimSuffix(m, ":latest") == d.cfg.LLM.Model {
				found = true
			}
		}
		if !found && len(models) > 0 {
			d.log.Warn("the configured model is not among those the endpoint lists", "model", d.cfg.LLM.Model, "listed", len(models))
		}
	}
	<-ctx.Done()
	return nil
}

func loadPersona(dir string) (*persona.Persona, error) {
	if dir == "" {
		return persona.Default()
	}
	p, err := persona.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("persona %s: %w (fix the file, or remove `persona:` from the config to use the built-in one)", dir, err)
	}
	return p, nil
}

// loadToken reads the bearer token, creating it (0600) on first use.
func loadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if len(tok) < 16 {
			return "", fmt.Errorf("daemon: the token in %s is too short; delete the file and restart to make a new one", path)
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("daemon: read token %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("daemon: create data dir: %w", err)
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	tok := hex.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("daemon: write token %s: %w", path, err)
	}
	return tok, nil
}

// ReadToken returns the token of a data dir, "" when there is none; the CLI
// sends it when it exists.
func ReadToken(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, TokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("daemon: cannot listen on %s: the address is in use (another cyan, or another program); stop it or set CYAN_ADDR to a free host:port", addr)
	}
	return fmt.Errorf("daemon: cannot listen on %s: %w (set CYAN_ADDR)", addr, err)
}

// configFile is the configuration file the daemon reads, or the one it
// would read (cyan.yaml in the data folder) when there is none.
func configFile(cfg *config.Config) string {
	f := cfg.File
	if f == "" {
		f = filepath.Join(cfg.DataDir, config.FileName)
	}
	if abs, err := filepath.Abs(f); err == nil {
		f = abs
	}
	return f
}
