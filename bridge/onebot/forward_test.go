package onebot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/internal/clocktest"
	"github.com/cyan-agent/cyan/internal/onebottest"
	"github.com/cyan-agent/cyan/supervise"
)

// supervised runs a forward adapter as the daemon does: a part of a
// supervisor on clk, which makes each next connection attempt.
func supervised(t *testing.T, a *Adapter, s bridge.Sink, clk clock.Clock) *supervise.Supervisor {
	t.Helper()
	sup := supervise.New(supervise.Options{Clock: clk})
	sup.Add(supervise.Part{Name: "bridge:qq", Run: func(ctx context.Context) error { return a.Run(ctx, s) }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the supervisor: %v", err)
		}
	})
	return sup
}

// partState is the supervised adapter's state.
func partState(sup *supervise.Supervisor) supervise.State { return sup.Status()[0] }

// sleeping waits until the supervisor waits to start the next attempt —
// the clock has n waiters: the supervisor's and those left by the
// connections before (a heartbeat watch's) — and returns its state then.
func sleeping(t *testing.T, sup *supervise.Supervisor, clk *clocktest.Clock, n int) supervise.State {
	t.Helper()
	if !clk.WaitFor(n, 10*time.Second) {
		t.Fatalf("the supervisor never waited for the next attempt: %+v", partState(sup))
	}
	st := partState(sup)
	if st.State != supervise.Restarting || !st.Retry.After(clk.Now()) {
		t.Fatalf("waiting, the part reads %+v", st)
	}
	return st
}

func forwardURL(srv *httptest.Server) string { return "ws" + strings.TrimPrefix(srv.URL, "http") }

// A wrong forward token — NapCat's 1403 frame, an HTTP 401, or a close
// right after every upgrade — is named as such and the waits between
// attempts, which the dialer learns and the supervisor keeps on its
// clock, grow to minutes: at most 6 attempts in the first minute, one
// every 5 minutes at last.
func TestWrongForwardTokenBacksOffToMinutes(t *testing.T) {
	quickCloser := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err == nil {
			ws.Close(websocket.StatusPolicyViolation, "")
		}
	})
	for _, tc := range []struct {
		name  string
		impl  *onebottest.Impl
		h     http.Handler
		proof string
		at    []time.Duration // when each attempt is made, in seconds
	}{
		{"napcat 1403 frame", &onebottest.Impl{SelfID: 1, Token: "right"}, nil, "retcode 1403 \"token验证失败\"",
			[]time.Duration{0, 5, 15, 35, 75, 155, 315, 615, 915}},
		{"http 403", &onebottest.Impl{SelfID: 1, Token: "right", HTTPRefusal: true}, nil, "HTTP 403",
			[]time.Duration{0, 5, 15, 35, 75, 155, 315, 615, 915}},
		// Two quick closes are not yet proof (1 s each: reconnect); the
		// third is.
		{"closed at once", nil, quickCloser, "closed each of the last 3 connections",
			[]time.Duration{0, 1, 2, 7, 17, 37, 77, 157, 317, 617, 917}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h
			if tc.impl != nil {
				h = tc.impl
			}
			var dials atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				dials.Add(1)
				h.ServeHTTP(w, r)
			}))
			defer srv.Close()
			start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
			clk := clocktest.New(start)
			a, err := New(Options{Name: "qq", Mode: "forward", URL: forwardURL(srv), AccessToken: "wrong",
				Reconnect: time.Second, Clock: clk, Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			s := newSink()
			sup := supervised(t, a, s, clk)
			var times []time.Duration // when each attempt was made
			var st supervise.State
			for len(times) < len(tc.at) {
				st = sleeping(t, sup, clk, 1)
				for int(a.Attempts()) > len(times) {
					times = append(times, clk.Now().Sub(start))
				}
				if len(times) < len(tc.at) {
					clk.Set(st.Retry)
				}
			}
			for i := range tc.at {
				tc.at[i] *= time.Second
			}
			if fmt.Sprint(times) != fmt.Sprint(tc.at) {
				t.Errorf("attempts at %v, want %v", times, tc.at)
			}
			if n := dials.Load(); n != int64(len(times)) {
				t.Errorf("the server saw %d connections for %d attempts", n, len(times))
			}
			first := 0
			for _, at := range times {
				if at < time.Minute {
					first++
				}
			}
			if first > 6 {
				t.Errorf("%d attempts in the first minute, want ≤ 6: %v", first, times)
			}
			if wait := st.Retry.Sub(clk.Now()); wait != authMaxWait {
				t.Errorf("the supervisor waits %s for the next attempt, want %s", wait, authMaxWait)
			}
			if !strings.HasPrefix(st.LastError, "wrong access_token: ") || !strings.Contains(st.LastError, "bridges.onebot[].access_token") {
				t.Errorf("the part's last error %q does not name the setting", st.LastError)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			var auth *bridge.AuthError
			found := false
			for _, p := range s.problems {
				if errors.As(p, &auth) && auth.Setting == "wrong access_token" && strings.Contains(p.Error(), tc.proof) && strings.Contains(p.Error(), "bridges.onebot[].access_token") {
					found = true
				}
			}
			if !found {
				t.Errorf("no wrong-access_token problem naming %q: %v", tc.proof, s.problems)
			}
		})
	}
}

// A forward connection that proved healthy (get_login_info answered, a
// heartbeat seen) tells the supervisor so: the part's last error is
// cleared while it is connected, and when the link drops the next attempt
// is a second later, not after the waits the failures before it grew.
func TestAHealthyForwardConnectionStartsTheWaitsOver(t *testing.T) {
	impl := &onebottest.Impl{SelfID: 10001, Nickname: "青蓝", Token: "tok", HeartInterval: -1}
	var down atomic.Bool
	down.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "starting", http.StatusBadGateway)
			return
		}
		impl.ServeHTTP(w, r)
	}))
	defer srv.Close()
	clk := clocktest.New(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	a, err := New(Options{Name: "qq", Mode: "forward", URL: forwardURL(srv), AccessToken: "tok", Clock: clk, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := newSink()
	sup := supervised(t, a, s, clk)
	var st supervise.State
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		st = sleeping(t, sup, clk, 1)
		if wait := st.Retry.Sub(clk.Now()); wait != want || !strings.Contains(st.LastError, "cannot connect") {
			t.Fatalf("after a refused upgrade: wait %s (want %s), %+v", wait, want, st)
		}
		if want == 4*time.Second {
			down.Store(false)
		}
		clk.Set(st.Retry)
	}
	s.until(t, "connected", func() bool { return len(s.self) > 0 })
	if st := partState(sup); st.State != supervise.Running || st.LastError == "" {
		t.Fatalf("connected, before it proved healthy: %+v", st)
	}
	if err := impl.Heartbeat(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitTrue(t, "the part to read healthy", func() bool { return partState(sup).LastError == "" })
	impl.Disconnect()
	st = sleeping(t, sup, clk, 2) // and the connection's heartbeat watch
	if wait := st.Retry.Sub(clk.Now()); wait != time.Second || !strings.Contains(st.LastError, "closed the connection") {
		t.Fatalf("after a healthy connection dropped: wait %s, want 1s; %+v", wait, st)
	}
}

// TestTheDialersScheduleLearnsARefusedToken: the waits the dialer asks
// the supervisor for, attempt by attempt — doubling to reconnect, to five
// minutes once the token is refused, back to a second after a healthy
// connection.
func TestTheDialersScheduleLearnsARefusedToken(t *testing.T) {
	type outcome struct{ healthy, refused bool }
	fail, refused, healthy := outcome{}, outcome{refused: true}, outcome{healthy: true}
	for _, tc := range []struct {
		name string
		max  time.Duration
		runs []outcome
		want []time.Duration // seconds
	}{
		{"down, to reconnect", 30 * time.Second, []outcome{fail, fail, fail, fail, fail, fail, fail}, []time.Duration{1, 2, 4, 8, 16, 30, 30}},
		{"refused from the first", time.Second, []outcome{refused, refused, refused, refused, refused, refused, refused, refused}, []time.Duration{5, 10, 20, 40, 80, 160, 300, 300}},
		{"refused after waits past 5 s", 30 * time.Second, []outcome{fail, fail, fail, fail, refused, refused}, []time.Duration{1, 2, 4, 8, 16, 32}},
		{"a healthy connection starts over", 30 * time.Second, []outcome{refused, refused, refused, healthy, fail, fail}, []time.Duration{5, 10, 20, 1, 2, 4}},
		{"refusal forgotten once healthy", time.Second, []outcome{refused, healthy, fail, fail}, []time.Duration{5, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRedial(tc.max)
			var got []time.Duration
			for _, o := range tc.runs {
				got = append(got, r.after(o.healthy, o.refused))
			}
			for i := range tc.want {
				tc.want[i] *= time.Second
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("waits %v, want %v", got, tc.want)
			}
		})
	}
	r := newRedial(time.Second)
	for i := 1; i <= 4; i++ {
		if n, refused := r.closedQuickly(); n != i || refused != (i >= quickCloses) {
			t.Fatalf("quick close %d: %d, %v", i, n, refused)
		}
	}
	r.loggedIn()
	if n, refused := r.closedQuickly(); n != 1 || refused {
		t.Fatalf("a login did not start the quick closes over: %d, %v", n, refused)
	}
}

// instant is a clock whose waits end at once.
type instant struct{}

func (instant) Now() time.Time { return time.Now() }
func (instant) After(time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	c <- time.Now()
	return c
}

func TestForwardReconnectsAndRefusedTokensSayWhy(t *testing.T) {
	impl := &onebottest.Impl{SelfID: 10001, Token: "tok", HTTPRefusal: true}
	srv := httptest.NewServer(impl)
	defer srv.Close()
	a, err := New(Options{Name: "qq", Mode: "forward", URL: forwardURL(srv), AccessToken: "tok", Clock: instant{}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := newSink()
	supervised(t, a, s, instant{})
	s.until(t, "connected", func() bool { return len(s.self) > 0 })
	impl.Disconnect()
	s.until(t, "disconnected", func() bool { return len(s.down) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := impl.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	s.until(t, "reconnected", func() bool { return len(s.self) >= 2 })
	impl.Private(onebottest.Sender{UserID: 2, Nickname: "bob"}, onebottest.Text("back?"))
	s.until(t, "a message after reconnecting", func() bool { return len(s.msgs) == 1 })

	bad, _ := New(Options{Name: "qq", Mode: "forward", URL: forwardURL(srv), AccessToken: "wrong", Clock: instant{}})
	s2 := newSink()
	supervised(t, bad, s2, instant{})
	s2.until(t, "a refusal", func() bool { return len(s2.problems) > 0 })
	s2.mu.Lock()
	defer s2.mu.Unlock()
	if !strings.Contains(s2.problems[0].Error(), "refused the access token (HTTP 403)") {
		t.Errorf("problem = %v", s2.problems[0])
	}
}
