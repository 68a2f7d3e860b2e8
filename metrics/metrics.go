package metrics

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
)

// Metrics is the registry and its collectors. The zero value is not
// ready; use New. A nil *Metrics records nothing, so parts built without
// one (tests) need no checks.
type Metrics struct {
	reg *prometheus.Registry

	turns        *prometheus.CounterVec
	turnSeconds  *prometheus.HistogramVec
	modelReqs    *prometheus.CounterVec
	modelTokens  *prometheus.CounterVec
	modelErrors  *prometheus.CounterVec
	modelSeconds *prometheus.HistogramVec
	toolCalls    *prometheus.CounterVec
	recall       *prometheus.HistogramVec
	backups      *prometheus.CounterVec
}

// New builds the registry with the Go runtime's and the process's
// collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	slow := []float64{.1, .25, .5, 1, 2.5, 5, 10, 20, 40, 80, 160}
	m.turns = m.counter("cyan_turns_total", "Turns of main-virtual, by conversation kind, whether the agent spoke first, and outcome.", "kind", "proactive", "outcome")
	m.turnSeconds = m.histogram("cyan_turn_seconds", "Seconds from a turn's message stored to its last answer.", slow, "kind")
	m.modelReqs = m.counter("cyan_model_requests_total", "Model calls, by provider, step (main-virtual or a prompt script), account (the observer paying; none for foreground work) and outcome.", "provider", "step", "account", "outcome")
	m.modelTokens = m.counter("cyan_model_tokens_total", "Model tokens, by provider, step, account and direction (input, output).", "provider", "step", "account", "direction")
	m.modelErrors = m.counter("cyan_model_errors_total", "Failed model calls, by provider, step and kind of failure.", "provider", "step", "kind")
	m.modelSeconds = m.histogram("cyan_model_request_seconds", "Seconds a model call took.", slow, "provider", "step")
	m.toolCalls = m.counter("cyan_tool_calls_total", "Tool calls the model made, by tool and the permission decision (allow, deny, confirm) or limited.", "tool", "decision")
	m.recall = m.histogram("cyan_recall_seconds", "Seconds a recall took, by mode (search, tool) and way in (api, tool).",
		[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}, "mode", "via")
	m.backups = m.counter("cyan_backups_total", "Scheduled backups, by outcome (made, failed).", "outcome")
	return m
}

func (m *Metrics) counter(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	m.reg.MustRegister(c)
	return c
}

func (m *Metrics) histogram(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	m.reg.MustRegister(h)
	return h
}

// Handler serves the metrics in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Registry is the registry, for parts that add their own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Turn records a finished turn.
func (m *Metrics) Turn(kind string, proactive bool, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	p := "false"
	if proactive {
		p = "true"
	}
	m.turns.WithLabelValues(kind, p, outcome).Inc()
	if outcome == "answered" {
		m.turnSeconds.WithLabelValues(kind).Observe(took.Seconds())
	}
}

// ToolCall records a tool call of the model.
func (m *Metrics) ToolCall(tool, decision string) {
	if m != nil {
		m.toolCalls.WithLabelValues(tool, decision).Inc()
	}
}

// Recall records a recall's duration.
func (m *Metrics) Recall(mode, via string, took time.Duration) {
	if m == nil {
		return
	}
	if mode == "" {
		mode = "tool"
	}
	m.recall.WithLabelValues(mode, via).Observe(took.Seconds())
}

// Backup records a scheduled backup.
func (m *Metrics) Backup(err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.backups.WithLabelValues("failed").Inc()
	} else {
		m.backups.WithLabelValues("made").Inc()
	}
}

// Store adds the store's gauges: its size, whether it takes writes, the
// free space of its disk, and its message count.
func (m *Metrics) Store(st *store.Store) {
	if m == nil || st == nil {
		return
	}
	for _, part := range []string{"lsm", "vlog"} {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cyan_store_bytes", Help: "The database's size on disk, by part (lsm, vlog).",
			ConstLabels: prometheus.Labels{"part": part}}, func() float64 {
			lsm, vlog := st.DiskSize()
			if part == "lsm" {
				return float64(lsm)
			}
			return float64(vlog)
		}))
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cyan_store_writable", Help: "1 while the store takes writes; 0 when its disk is full or its data folder is gone."},
		func() float64 {
			if st.Writable() != nil {
				return 0
			}
			return 1
		}))
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cyan_store_disk_free_bytes", Help: "Free space on the data dir's disk (-1 when unknown)."},
		func() float64 {
			free, err := st.DiskFree()
			if err != nil {
				return -1
			}
			return float64(free)
		}))
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cyan_messages_total", Help: "Messages stored (the arrival log's length)."},
		func() float64 { return float64(st.LastArrival()) }))
}

// LLM wraps a model client so that each call is counted. provider names
// the client ("openai", "anthropic"); account reads the observer account a
// call is made for (nil: none).
func (m *Metrics) LLM(c llm.Client, provider string, account func(context.Context) string) llm.Client {
	if m == nil {
		return c
	}
	return &meteredLLM{Client: c, m: m, provider: provider, account: account}
}

type meteredLLM struct {
	llm.Client
	m        *Metrics
	provider string
	account  func(context.Context) string
}

// Unwrap is the metered client (llm finds its own client under it).
func (c *meteredLLM) Unwrap() llm.Client { return c.Client }

func (c *meteredLLM) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	began := time.Now()
	resp, err := c.Client.Chat(ctx, req)
	c.record(ctx, resp, err, time.Since(began))
	return resp, err
}

func (c *meteredLLM) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	began := time.Now()
	resp, err := c.Client.Stream(ctx, req, onDelta)
	c.record(ctx, resp, err, time.Since(began))
	return resp, err
}

func (c *meteredLLM) record(ctx context.Context, resp *llm.Response, err error, took time.Duration) {
	step := llm.StepOf(ctx)
	if step == "" {
		step = "main-virtual"
	}
	account := ""
	if c.account != nil {
		account = c.account(ctx)
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
		kind := string(llm.KindOf(err))
		if kind == "" {
			kind = "other"
			if errors.Is(err, context.Canceled) {
				kind = "canceled"
			}
		}
		c.m.modelErrors.WithLabelValues(c.provider, step, kind).Inc()
	}
	c.m.modelReqs.WithLabelValues(c.provider, step, account, outcome).Inc()
	c.m.modelSeconds.WithLabelValues(c.provider, step).Observe(took.Seconds())
	if resp != nil {
		c.m.modelTokens.WithLabelValues(c.provider, step, account, "input").Add(float64(resp.Usage.InputTokens))
		c.m.modelTokens.WithLabelValues(c.provider, step, account, "output").Add(float64(resp.Usage.OutputTokens))
	}
}
