package telegram

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/clocktest"
	"github.com/cyan-agent/cyan/internal/tgtest"
	"github.com/cyan-agent/cyan/supervise"
)

// TestAFailingPollEndsTheSessionForTheSupervisor: a getUpdates that fails
// (here Telegram's 429 with retry_after 7) ends the session at once — no
// retries of the library's own — and the supervisor starts the next one
// after the wait Telegram asked for, on its clock. The new session polls
// from after the last update handed over, so a message the failed poll
// left unconfirmed is not handed over twice.
func TestAFailingPollEndsTheSessionForTheSupervisor(t *testing.T) {
	fake := &tgtest.Server{Token: "123:abc", Bot: botUser}
	var limited atomic.Bool
	var refused atomic.Int64 // getUpdates answered 429
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/getUpdates") && limited.Load() {
			refused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}`))
			return
		}
		if !strings.HasSuffix(r.URL.Path, "/getUpdates") {
			fake.ServeHTTP(w, r)
			return
		}
		// The poll after the one that brings "first" fails, so "first"
		// is never confirmed by an offset past it.
		rec := httptest.NewRecorder()
		fake.ServeHTTP(rec, r)
		if strings.Contains(rec.Body.String(), `"first"`) {
			limited.Store(true)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer srv.Close()
	clk := clocktest.New(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	a, err := New(Options{Name: "tg", Token: "123:abc", APIURL: srv.URL, PollTimeout: 2 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	s := new(sink)
	sup := supervise.New(supervise.Options{Clock: clk})
	sup.Add(supervise.Part{Name: "bridge:tg", Run: func(ctx context.Context) error { return a.Run(ctx, s) }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	s.until(t, "connected", func() bool { return len(s.self) == 1 })
	fake.Push(tgtest.Message{From: amy, Chat: grp, Text: "first"})
	s.until(t, "the first message", func() bool { return len(s.msgs) == 1 })
	if !clk.WaitFor(1, 10*time.Second) {
		t.Fatalf("the session did not end: %+v", sup.Status())
	}
	st := sup.Status()[0]
	if st.State != supervise.Restarting || !st.Retry.Equal(clk.Now().Add(7*time.Second)) || !strings.Contains(st.LastError, "getUpdates") || !strings.Contains(st.LastError, "retry_after 7") {
		t.Fatalf("after the refused poll: %+v", st)
	}
	if n := refused.Load(); n != 1 {
		t.Errorf("getUpdates was tried %d times in the session, want 1: the library retried on its own", n)
	}
	limited.Store(false)
	clk.Advance(7 * time.Second)
	s.until(t, "connected again", func() bool { return len(s.self) == 2 })
	fake.Push(tgtest.Message{From: amy, Chat: grp, Text: "second"})
	s.until(t, "the second message", func() bool { return len(s.msgs) >= 2 })
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.msgs) != 2 || s.msgs[1].Parts[0].Text != "second" {
		var texts []string
		for _, m := range s.msgs {
			texts = append(texts, m.Parts[0].Text)
		}
		t.Errorf("handed over %q, want [first second]", texts)
	}
}
