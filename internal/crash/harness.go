package crash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// Fault modes.
const (
	FaultNone     = ""
	FaultDiskFull = "disk-full"
	FaultSlowDisk = "slow-disk"
)

// Options configure Run.
type Options struct {
	// Binary is the cyan binary to run.
	Binary string
	// Cycles is how many times the daemon is killed and started again.
	Cycles int
	// Clients is how many conversations run at once (each in its own
	// channels).
	Clients int
	// Seed makes the kill moments repeatable (0: from the clock).
	Seed uint64
	// Fault is FaultNone, FaultDiskFull or FaultSlowDisk.
	Fault string
	// Dir is the work folder (a new temporary one when empty; removed
	// afterwards unless Keep).
	Dir  string
	Keep bool
	// Progress receives a line now and then (nil: none).
	Progress io.Writer
	// Env is added to the daemon's environment.
	Env []string
}

// Report is what a run found.
type Report struct {
	Cycles           int
	KillsDuringStart int
	// KillsBeforeListening: of those, the kills before the daemon
	// listened (while it opened its store and built its parts).
	KillsBeforeListening int
	// Repairs counts the leftovers of an interrupted start that a start
	// removed (the store logs each).
	Repairs            int
	KillsDuringTraffic int
	Starts             int
	FailedStarts       int      // a start that did not open (it exited, or never listened)
	StartErrors        []string // the log tail of each failed start
	Sent               int      // requests made (retries included)
	Acknowledged       int      // messages acknowledged (200), each counted once
	Replayed           int      // retries answered with the first answer
	Unanswered         int      // requests cut by a kill, sent again
	Refused            int      // 507 and 503 answers (fault modes)
	Lost               int      // acknowledged messages not in the store
	Duplicated         int      // messages stored more than once
	OutOfOrder         int
	MissingReplies     int // acknowledged messages without exactly one reply
	Checks             int // verification passes (recall, workspace, events answered)
	CheckFailures      []string
	Elapsed            time.Duration
}

// OK reports whether nothing was lost, duplicated or out of order, every
// start opened and every check passed.
func (r *Report) OK() bool {
	return r.Lost == 0 && r.Duplicated == 0 && r.OutOfOrder == 0 && r.MissingReplies == 0 &&
		r.FailedStarts == 0 && len(r.CheckFailures) == 0
}

// String is the report as a table.
func (r *Report) String() string {
	var b strings.Builder
	row := func(k string, v any) { fmt.Fprintf(&b, "%-34s %v\n", k, v) }
	row("cycles (kill -9, start again)", r.Cycles)
	row("  killed soon after starting", r.KillsDuringStart)
	row("    before it listened", r.KillsBeforeListening)
	row("  killed while answering", r.KillsDuringTraffic)
	row("starts", r.Starts)
	row("  leftovers repaired at start", r.Repairs)
	row("failed starts", r.FailedStarts)
	row("requests sent", r.Sent)
	row("messages acknowledged", r.Acknowledged)
	row("  cut by a kill and sent again", r.Unanswered)
	row("  answered from the first answer", r.Replayed)
	row("refused (disk full / gone)", r.Refused)
	row("lost", r.Lost)
	row("duplicated", r.Duplicated)
	row("out of order", r.OutOfOrder)
	row("without exactly one reply", r.MissingReplies)
	row("checks (recall, memory, events)", r.Checks)
	row("check failures", len(r.CheckFailures))
	row("elapsed", r.Elapsed.Round(time.Second))
	for _, e := range r.StartErrors {
		fmt.Fprintf(&b, "failed start: %s\n", e)
	}
	for _, e := range r.CheckFailures {
		fmt.Fprintf(&b, "check failure: %s\n", e)
	}
	return b.String()
}

// markRe finds a message's mark ("c1-17") in what the model is sent.
var markRe = regexp.MustCompile(`\bc\d+-\d+\b`)

// replyTo is the fake model's answer to a message.
func replyTo(mark string) string { return "ack " + mark }

// Run runs the harness until Cycles are done or ctx ends.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Binary == "" {
		return nil, errors.New("crash: no binary")
	}
	o.Cycles = max(o.Cycles, 1)
	o.Clients = max(o.Clients, 1)
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "cyan-crash-")
		if err != nil {
			return nil, err
		}
		o.Dir = d
		if !o.Keep {
			defer os.RemoveAll(d)
		}
	}
	fake := new(llmtest.Server)
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if m := req.Messages[i]; m.Role == llm.RoleUser {
				if mark := markRe.FindString(m.Content); mark != "" {
					return llmtest.Reply{Text: replyTo(mark)}
				}
				break
			}
		}
		return llmtest.Reply{Text: "ok"}
	})
	llmSrv := httptest.NewServer(fake)
	defer llmSrv.Close()

	h := &harness{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x63_79_61_6e)), fake: fake, report: &Report{}}
	h.dataDir = filepath.Join(o.Dir, "data")
	fault, err := newFault(o.Fault, o.Dir)
	if err != nil {
		return nil, err
	}
	defer fault.close()
	h.fault = fault
	if fault.mount != "" {
		h.dataDir = filepath.Join(fault.mount, "data")
	}
	cfg := filepath.Join(o.Dir, "cyan.yaml")
	if err := os.WriteFile(cfg, []byte(configYAML(fault)), 0o600); err != nil {
		return nil, err
	}
	h.env = append([]string{
		"HOME=" + o.Dir, "PATH=" + os.Getenv("PATH"),
		"CYAN_DATA_DIR=" + h.dataDir, "CYAN_ADDR=127.0.0.1:0", "CYAN_CONFIG=" + cfg,
		"CYAN_LLM_BASE_URL=" + llmSrv.URL + "/v1", "CYAN_LLM_MODEL=fake-model",
	}, o.Env...)
	began := time.Now()
	err = h.run(ctx)
	h.report.Elapsed = time.Since(began)
	return h.report, err
}

// configYAML is the daemon's configuration: no rate limits (the clients
// are fast), no compression (the fake answers every call the same way),
// and the fault's store margin.
func configYAML(f *fault) string {
	s := "limits: {messages_per_minute: 0, tool_calls_per_minute: 0}\nagent: {compress: {enabled: false}}\nlog: {level: warn}\n"
	if f.minFreeMB > 0 {
		s += fmt.Sprintf("store: {min_free_mb: %d}\n", f.minFreeMB)
	}
	return s
}

type harness struct {
	o       Options
	rng     *rand.Rand
	fake    *llmtest.Server
	fault   *fault
	dataDir string
	env     []string
	startup time.Duration // how long the last start took to listen

	mu     sync.Mutex
	report *Report
}

func (h *harness) progress(format string, a ...any) {
	if h.o.Progress != nil {
		fmt.Fprintf(h.o.Progress, format+"\n", a...)
	}
}

func (h *harness) count(f func(r *Report)) {
	h.mu.Lock()
	f(h.report)
	h.mu.Unlock()
}

func (h *harness) run(ctx context.Context) error {
	clients := make([]*client, h.o.Clients)
	for i := range clients {
		clients[i] = newClient(i+1, h)
	}
	for cycle := 1; cycle <= h.o.Cycles; cycle++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		h.fake.Reset() // the fake keeps every request; a long run would hoard them
		h.fault.perturb(h.rng)
		if h.startup > 0 && h.rng.IntN(10) < 3 {
			if err := h.killWhileOpening(ctx); err != nil {
				return err
			}
		} else if err := h.killWhileAnswering(ctx, clients); err != nil {
			return err
		}
		h.count(func(r *Report) { r.Cycles++ })
		if cycle%25 == 0 || cycle == h.o.Cycles {
			if err := h.verify(ctx, clients); err != nil {
				return err
			}
			r := h.snapshot()
			h.progress("cycle %d/%d: %d acknowledged, %d lost, %d duplicated, %d failed starts", cycle, h.o.Cycles, r.Acknowledged, r.Lost, r.Duplicated, r.FailedStarts)
		}
	}
	return nil
}

func (h *harness) snapshot() Report {
	h.mu.Lock()
	defer h.mu.Unlock()
	return *h.report
}

// killWhileOpening starts the daemon and kills it a random moment later,
// often before it listens: while Badger opens or replays its logs.
func (h *harness) killWhileOpening(ctx context.Context) error {
	p, err := startProcess(h.o.Binary, h.env)
	if err != nil {
		return err
	}
	h.fault.enter(p.cmd.Process.Pid)
	// A moment within the time a start takes, so most of these kills land
	// while the store opens and the parts are built.
	window := max(20*time.Millisecond, h.startup*6/5)
	delay := time.Duration(h.rng.Int64N(int64(window)))
	select {
	case <-time.After(delay):
	case <-p.exited:
	case <-ctx.Done():
	}
	listened := false
	select {
	case p.base = <-p.listening:
		listened = true
	default:
	}
	h.count(func(r *Report) {
		r.Starts++
		r.KillsDuringStart++
		if !listened {
			r.KillsBeforeListening++
		}
	})
	if p.exitedOnItsOwn() {
		h.failedStart(p)
	}
	p.kill()
	h.count(func(r *Report) { r.Repairs += p.repairs() })
	return nil
}

// killWhileAnswering starts the daemon, lets the clients talk to it for a
// random while, and kills it mid-conversation.
func (h *harness) killWhileAnswering(ctx context.Context, clients []*client) error {
	p, err := h.startListening(ctx)
	if err != nil {
		return err
	}
	talk, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() { c.talk(talk, p.base) })
	}
	select {
	case <-time.After(time.Duration(50+h.rng.IntN(700)) * time.Millisecond):
	case <-ctx.Done():
	}
	p.kill() // the clients see their connections cut
	stop()
	wg.Wait()
	h.count(func(r *Report) { r.Repairs += p.repairs() })
	h.count(func(r *Report) { r.KillsDuringTraffic++ })
	return nil
}

// startListening starts the daemon until one start listens; starts that
// fail are counted with their log.
func (h *harness) startListening(ctx context.Context) (*process, error) {
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if attempt == 5 {
			return nil, fmt.Errorf("crash: the daemon failed to start 5 times in a row; the last log:\n%s", h.report.StartErrors[len(h.report.StartErrors)-1])
		}
		p, err := startProcess(h.o.Binary, h.env)
		if err != nil {
			return nil, err
		}
		h.fault.enter(p.cmd.Process.Pid)
		h.count(func(r *Report) { r.Starts++ })
		began := time.Now()
		if p.waitListening(60 * time.Second) {
			h.startup = time.Since(began)
			return p, nil
		}
		h.failedStart(p)
		p.kill()
	}
}

func (h *harness) failedStart(p *process) {
	tail := p.logTail(2000)
	h.count(func(r *Report) {
		r.FailedStarts++
		r.StartErrors = append(r.StartErrors, tail)
	})
	h.progress("a start failed:\n%s", tail)
}
