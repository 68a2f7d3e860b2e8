package llm_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// sleeps records the waits a client asks for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// fixture is a fake server and a client pointed at it.
type fixture struct {
	srv    *llmtest.Server
	ts     *httptest.Server
	client llm.Client
	sleeps *sleeps
}

// newFixture starts a fake server and a client for provider; edit, if
// given, adjusts the options before New.
func newFixture(t *testing.T, provider string, edit func(*llm.Options)) *fixture {
	t.Helper()
	f := &fixture{srv: &llmtest.Server{}, sleeps: &sleeps{}}
	f.ts = httptest.NewServer(f.srv)
	t.Cleanup(f.ts.Close)
	base := f.ts.URL + "/v1"
	if provider == "anthropic" {
		base = f.ts.URL
	}
	opts := llm.Options{
		Provider: provider,
		BaseURL:  base,
		Model:    "fake-model",
		APIKey:   "test-key",
		Sleep:    f.sleeps.sleep,
	}
	if edit != nil {
		edit(&opts)
	}
	c, err := llm.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.client = c
	return f
}

// only returns the single recorded request, failing if there is not
// exactly one.
func (f *fixture) only(t *testing.T) llmtest.Request {
	t.Helper()
	reqs := f.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	return reqs[0]
}

// collect gathers streamed deltas.
type collect struct {
	deltas []llm.Delta
}

func (c *collect) on(d llm.Delta) error {
	c.deltas = append(c.deltas, d)
	return nil
}

func (c *collect) content() string {
	var s string
	for _, d := range c.deltas {
		s += d.Content
	}
	return s
}

func (c *collect) reasoning() string {
	var s string
	for _, d := range c.deltas {
		s += d.Reasoning
	}
	return s
}

var providers = []string{"openai", "anthropic"}

func userMsg(s string) llm.Message { return llm.Message{Role: llm.RoleUser, Content: s} }
