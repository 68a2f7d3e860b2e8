package daemon

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
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
	fake := new(llmtest.Server)
	llmSrv := httptest.NewServer(fake)
	defer llmSrv.Close()
	dir := t.TempDir()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"CYAN_DATA_DIR": dir, "CYAN_ADDR": "127.0.0.1:0", "CYAN_LLM_BASE_URL": llmSrv.URL + "/v1", "CYAN_LLM_MODEL": "fake-model"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	addrc := make(chan net.Addr, 1)
	d, err := New(Options{Config: cfg, Ready: func(a net.Addr) { addrc <- a }})
	if err != nil {
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

	resp, err = http.Get(base + "/metrics")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %v %v", resp, err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
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
	} {
		if v := value(t, fams, c.name, c.labels); v < c.least {
			t.Errorf("%s%v = %g, want at least %g", c.name, c.labels, v, c.least)
		}
	}
	if _, ok := fams["cyan_model_errors_total"]; ok {
		t.Errorf("model errors counted with none made")
	}
}
