package onebot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/internal/clocktest"
	"github.com/cyan-agent/cyan/internal/onebottest"
)

// stallSink is a sink whose Inbound blocks until released: a chat whose
// handling never ends. It also hears recalls and pokes.
type stallSink struct {
	*sink
	release chan struct{}
	mu      sync.Mutex
	recalls []string
	pokes   []string
}

func (s *stallSink) Inbound(ctx context.Context, m *bridge.Message) {
	s.sink.Inbound(ctx, m)
	if s.release != nil {
		<-s.release
	}
}

func (s *stallSink) Recalled(_ context.Context, c bridge.Chat, id string) {
	s.mu.Lock()
	s.recalls = append(s.recalls, c.Channel("qq")+"/"+id)
	s.mu.Unlock()
	s.poke()
}

func (s *stallSink) Poked(_ context.Context, c bridge.Chat, from bridge.User, _ time.Time) {
	s.mu.Lock()
	s.pokes = append(s.pokes, c.Channel("qq")+"/"+from.ID)
	s.mu.Unlock()
	s.poke()
}

// clockRig runs a reverse adapter on a fake clock.
func clockRig(t *testing.T, s bridge.Sink, clk clock.Clock) (*Adapter, string) {
	t.Helper()
	a, err := New(Options{Name: "qq", Mode: "reverse", AccessToken: "tok", Timeout: 5 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	rm := NewReverseMux(nil, map[string]*Adapter{"qq": a})
	mux.Handle(ReversePath, rm)
	mux.Handle(ReversePath+"/", rm)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, s) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return a, "ws" + strings.TrimPrefix(srv.URL, "http") + ReversePath
}

func waitTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A message whose handling never ends (a chat stalled on its media) holds
// up neither the heartbeats nor the responses: the watch sees frames
// arrive and keeps the link for 48 s of 5 s heartbeats (Lagrange.OneBot's
// default), sends are answered meanwhile, and only the connection's own
// silence closes it.
func TestHeartbeatWatchSeesOnlyTheConnectionsOwnSilence(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	s := &stallSink{sink: newSink(), release: make(chan struct{})}
	defer close(s.release)
	a, url := clockRig(t, s, clock)
	impl := &onebottest.Impl{SelfID: 10001, Nickname: "青蓝", Token: "tok", Lagrange: true, HeartInterval: -1}
	if err := impl.Connect(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	s.until(t, "connected", func() bool { return len(s.self) > 0 })
	c := a.current()
	beat := func() {
		t.Helper()
		if err := impl.Heartbeat(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		now := clock.Now().UnixNano()
		waitTrue(t, "the heartbeat read", func() bool { return c.lastFrame.Load() == now && c.interval.Load() == int64(5*time.Second) })
	}
	beat()
	impl.Group(555, onebottest.Sender{UserID: 1, Nickname: "amy"}, onebottest.Text("stalls its chat"))
	s.until(t, "the stalled message", func() bool { return len(s.msgs) == 1 })
	for range 12 {
		clock.Advance(4 * time.Second)
		beat()
		if _, err := a.Send(context.Background(), bridge.Chat{Kind: bridge.Private, ID: "7"}, bridge.Outgoing{Parts: []bridge.OutPart{{Kind: bridge.PartText, Text: "still here"}}}); err != nil {
			t.Fatalf("a send while a message stalls: %v", err)
		}
	}
	s.mu.Lock()
	down := len(s.down)
	s.mu.Unlock()
	if down != 0 || !impl.Connected() {
		t.Fatalf("the link was closed while heartbeats arrived: %v", s.down)
	}
	// Now the implementation goes silent: 2×5 s + 5 s later the link is
	// closed as dead.
	clock.Advance(16 * time.Second)
	s.until(t, "closed for silence", func() bool { return len(s.down) == 1 })
	if s.down[0] == nil || !strings.Contains(s.down[0].Error(), "no heartbeat") {
		t.Errorf("closed with %v", s.down[0])
	}
}

// The reverse path takes a trailing slash and Lagrange.OneBot's /api and
// /event suffixes, bare or after the bridge's name.
func TestReversePathsWithSlashAndSuffixes(t *testing.T) {
	for _, suffix := range []string{"/", "/api", "/event", "/qq", "/qq/", "/qq/api"} {
		t.Run(suffix, func(t *testing.T) {
			s := newSink()
			_, url := clockRig(t, s, nil)
			impl := &onebottest.Impl{SelfID: 10001, Token: "tok", Lagrange: true}
			if err := impl.Connect(context.Background(), url+suffix); err != nil {
				t.Fatalf("%s: %v", suffix, err)
			}
			s.until(t, "connected", func() bool { return len(s.self) > 0 })
		})
	}
	s := newSink()
	_, url := clockRig(t, s, nil)
	err := (&onebottest.Impl{SelfID: 1, Token: "tok"}).Connect(context.Background(), url+"/nobody")
	var re *onebottest.RefusedError
	if !errors.As(err, &re) || re.Status != http.StatusNotFound {
		t.Errorf("an unknown name: %v", err)
	}
}

// Recalls and pokes of the bot reach the sink; a poke of someone else
// and the bot's own poke do not.
func TestRecallsAndPokesReachTheSink(t *testing.T) {
	s := &stallSink{sink: newSink()}
	_, url := clockRig(t, s, nil)
	impl := &onebottest.Impl{SelfID: 10001, Token: "tok"}
	if err := impl.Connect(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	s.until(t, "connected", func() bool { return len(s.self) > 0 })
	impl.GroupRecall(555, 1, 1, 4242)
	impl.FriendRecall(7, 99)
	impl.GroupPoke(555, 2, 10001)
	impl.GroupPoke(555, 2, 3)    // someone else poked
	impl.FriendPoke(7, 10001, 7) // the bot poked its friend
	impl.FriendPoke(7, 7, 10001) // the friend poked the bot
	impl.Private(onebottest.Sender{UserID: 7}, onebottest.Text("end"))
	s.until(t, "the last message", func() bool { return len(s.msgs) == 1 })
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := fmt.Sprint(s.recalls); got != "[qq:group:555/4242 qq:private:7/99]" {
		t.Errorf("recalls %s", got)
	}
	if got := fmt.Sprint(s.pokes); got != "[qq:group:555/2 qq:private:7/7]" {
		t.Errorf("pokes %s", got)
	}
}
