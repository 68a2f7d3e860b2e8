package metrics

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/llm"
)

type failing struct{ llm.Client }

func (failing) Chat(context.Context, llm.Request) (*llm.Response, error) {
	return nil, errors.New("boom")
}

func TestNilRecordsNothingAndErrorsAreCounted(t *testing.T) {
	var none *Metrics
	none.Turn("private", false, "answered", time.Second)
	none.ToolCall("x", "allow")
	none.Recall("", "api", time.Second)
	none.Backup(nil)
	none.Store(nil)
	if c := none.LLM(failing{}, "openai", nil); c == nil {
		t.Fatal("a nil Metrics must hand the client back")
	}

	m := New()
	c := m.LLM(failing{}, "openai", func(context.Context) string { return "main-observer" })
	_, _ = c.Chat(llm.WithStep(context.Background(), "compress"), llm.Request{})
	m.Backup(errors.New("disk"))
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out := rec.Body.String()
	for _, want := range []string{
		`cyan_model_errors_total{kind="other",provider="openai",step="compress"} 1`,
		`cyan_model_requests_total{account="main-observer",outcome="error",provider="openai",step="compress"} 1`,
		`cyan_backups_total{outcome="failed"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
}
