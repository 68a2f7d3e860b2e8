package daemon

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/tgtest"
	"github.com/cyan-agent/cyan/llm"
)

// value is the sum of a family's samples whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	sum := 0.0
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// TestMetricsScrape runs the daemon, has it answer a turn with a tool call
// and a recall, scrapes GET /metrics and reads it with the Prometheus text
// parser.
func TestMetricsScrape(t *testing.T) {
	fake, cfg := fakeLLMConfig(t)
	addrc := make(chan net.Addr, 1)
	d, err := New(Options{Config: cfg, Ready: func(a net.Addr) { addrc <- a }})
	if err != nil {
		t.Fatal(err)
	}
	// A component that subscribes to the channel but never attaches: its
	// outbox fills with the replies.
	if err := d.Router().Subscribe("probe", []string{"home"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	base := "http://" + (<-addrc).String()

	fake.Enqueue(llmtest.Reply{Text: "let me look", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "recall", Arguments: `{"prompt":"tea"}`}},
		Usage: llm.Usage{InputTokens: 120, OutputTokens: 7}}, llmtest.Reply{Text: "found it"})
	resp, err := http.Post(base+"/api/v1/messages", "application/json", strings.NewReader(`{"channel":"home","text":"do you remember my tea?"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Post(base+"/api/v1/recall", "application/json", strings.NewReader(`{"prompt":"tea","mode":"search"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("recall: %v %v", resp, err)
	}
	resp.Body.Close()

	scrape := func() map[string]*dto.MetricFamily {
		resp, err := http.Get(base + "/metrics")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /metrics: %v %v", resp, err)
		}
		defer resp.Body.Close()
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(resp.Body)
		if err != nil {
			t.Fatalf("the scrape does not parse: %v", err)
		}
		return fams
	}
	fams := scrape()
	// The router's feed fills the outbox, and the metrics' follower counts
	// the turn, from the journal, a moment after the turn.
	for deadline := time.Now().Add(10 * time.Second); value(t, fams, "cyan_outbox_pending", map[string]string{"component": "probe"}) < 1 || fams["cyan_turns_total"] == nil; fams = scrape() {
		if time.Now().After(deadline) {
			t.Fatal("the probe's outbox never showed a pending delivery, or the turn was never counted")
		}
		time.Sleep(20 * time.Millisecond) // polling the router's feed, not a schedule
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		least  float64
	}{
		{"cyan_turns_total", map[string]string{"kind": "private", "proactive": "false", "outcome": "answered"}, 1},
		{"cyan_turn_seconds", map[string]string{"kind": "private"}, 1},
		{"cyan_model_requests_total", map[string]string{"provider": "openai", "step": "main-virtual", "outcome": "ok"}, 2},
		{"cyan_model_tokens_total", map[string]string{"step": "main-virtual", "direction": "input"}, 120},
		{"cyan_model_request_seconds", map[string]string{"step": "main-virtual"}, 2},
		{"cyan_tool_calls_total", map[string]string{"tool": "recall", "decision": "allow"}, 1},
		{"cyan_recall_seconds", map[string]string{"via": "tool"}, 1},
		{"cyan_recall_seconds", map[string]string{"mode": "search", "via": "api"}, 1},
		{"cyan_store_bytes", map[string]string{"part": "lsm"}, 0},
		{"cyan_store_writable", nil, 1},
		{"cyan_store_disk_free_bytes", nil, 1},
		{"cyan_messages_total", nil, 3},
		{"go_goroutines", nil, 1},
		{"cyan_component_attached", map[string]string{"component": "probe"}, 0},
		{"cyan_journal_events_total", nil, 3},
		{"cyan_part_state", map[string]string{"part": "api", "state": "running"}, 1},
		{"cyan_part_restarts_total", map[string]string{"part": "api"}, 0},
		{"cyan_events_rollups_due", nil, 0},
	} {
		if v := value(t, fams, c.name, c.labels); v < c.least {
			t.Errorf("%s%v = %g, want at least %g", c.name, c.labels, v, c.least)
		}
	}
	if _, ok := fams["cyan_model_errors_total"]; ok {
		t.Errorf("model errors counted with none made")
	}
}

// TestMetricsOfTheBridges: a connected bridge shows in /metrics.
func TestMetricsOfTheBridges(t *testing.T) {
	tg := &tgtest.Server{Token: "123:right", Bot: tgtest.User{ID: 77, IsBot: true, FirstName: "cyan", Username: "cyan_bot"}}
	srv := httptest.NewServer(tg)
	// Closed after the daemon stops (cleanups run last first): a server
	// closed under a running bridge waits out the long poll it holds.
	t.Cleanup(srv.Close)
	r := newRig(t, map[string]string{"cyan.yaml": "bridges:\n  telegram:\n    - {name: tg, token: \"123:right\", api_url: " + srv.URL + "}\n"})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) { // polling the bridge's connection
		resp, err := http.Get(r.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if value(t, fams, "cyan_bridge_connected", map[string]string{"bridge": "tg", "platform": "telegram"}) == 1 {
			if value(t, fams, "cyan_part_state", map[string]string{"part": "bridge:tg", "state": "running"}) != 1 {
				t.Fatal("bridge:tg is not a running part in /metrics")
			}
			if _, ok := fams["cyan_bridge_messages_total"]; !ok {
				t.Fatal("no cyan_bridge_messages_total")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the bridge never showed as connected in /metrics")
		}
	}
}
