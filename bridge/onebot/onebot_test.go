package onebot

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/internal/onebottest"
)

// sink records what the adapter hears.
type sink struct {
	mu       sync.Mutex
	msgs     []*bridge.Message
	self     []bridge.User
	down     []error
	problems []error
	changed  chan struct{}
}

func newSink() *sink { return &sink{changed: make(chan struct{}, 100)} }

func (s *sink) poke() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *sink) Inbound(_ context.Context, m *bridge.Message) {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	s.poke()
}
func (s *sink) Connected(u bridge.User) {
	s.mu.Lock()
	s.self = append(s.self, u)
	s.mu.Unlock()
	s.poke()
}
func (s *sink) Disconnected(err error) {
	s.mu.Lock()
	s.down = append(s.down, err)
	s.mu.Unlock()
	s.poke()
}
func (s *sink) Problem(err error) {
	s.mu.Lock()
	s.problems = append(s.problems, err)
	s.mu.Unlock()
	s.poke()
}

// until waits for cond, failing the test after 10 s.
func (s *sink) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		ok := cond()
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-s.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// reverseRig runs a reverse-mode adapter behind an httptest server.
func reverseRig(t *testing.T, token string) (*Adapter, *sink, string, *logBuf) {
	t.Helper()
	logs := new(logBuf)
	log := slog.New(slog.NewTextHandler(logs, nil))
	a, err := New(Options{Name: "qq", Mode: "reverse", AccessToken: token, Logger: log, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(ReversePath, NewReverseMux(log, map[string]*Adapter{"qq": a}))
	mux.Handle(ReversePath+"/", NewReverseMux(log, map[string]*Adapter{"qq": a}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s := newSink()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, s) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	// wait until Run has registered its context
	for range 100 {
		a.mu.Lock()
		up := a.ctx != nil
		a.mu.Unlock()
		if up {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return a, s, "ws" + strings.TrimPrefix(srv.URL, "http") + ReversePath, logs
}

func TestReverseReadsBothFormatsAndIgnoresItself(t *testing.T) {
	for _, format := range []string{"array", "string"} {
		t.Run(format, func(t *testing.T) {
			_, s, url, _ := reverseRig(t, "s3cret")
			impl := &onebottest.Impl{SelfID: 10001, Nickname: "青蓝", Token: "s3cret", Format: format}
			if err := impl.Connect(context.Background(), url); err != nil {
				t.Fatal(err)
			}
			s.until(t, "connected with the nickname", func() bool {
				return len(s.self) > 0 && s.self[len(s.self)-1].Name == "青蓝" && s.self[0].ID == "10001"
			})
			impl.Group(555, onebottest.Sender{UserID: 1, Nickname: "alice-nick", Card: "Alice"},
				onebottest.At("10001"), onebottest.Text(" look [this], a&b"), onebottest.Face("178"),
				onebottest.Image("a.jpg", "http://127.0.0.1:1/a.jpg"), onebottest.Reply("77"))
			impl.Private(onebottest.Sender{UserID: 2, Nickname: "bob"}, onebottest.Record("v.amr"), onebottest.Text("hi"))
			impl.Group(555, onebottest.Sender{UserID: 10001, Nickname: "me"}, onebottest.Text("my own words"))
			s.until(t, "two messages", func() bool { return len(s.msgs) >= 2 })
			time.Sleep(50 * time.Millisecond)
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.msgs) != 2 {
				t.Fatalf("heard %d messages, want 2 (the bot's own is skipped)", len(s.msgs))
			}
			g := s.msgs[0]
			if g.Chat != (bridge.Chat{Kind: bridge.Group, ID: "555"}) || g.From.ID != "1" || g.From.Name != "Alice" {
				t.Errorf("group message = %+v", g)
			}
			kinds := []bridge.PartKind{}
			for _, p := range g.Parts {
				kinds = append(kinds, p.Kind)
			}
			want := []bridge.PartKind{bridge.PartMention, bridge.PartText, bridge.PartFace, bridge.PartImage, bridge.PartReply}
			if len(kinds) != len(want) {
				t.Fatalf("parts = %v, want %v", kinds, want)
			}
			for i := range want {
				if kinds[i] != want[i] {
					t.Fatalf("parts = %v, want %v", kinds, want)
				}
			}
			if g.Parts[0].UserID != "10001" || g.Parts[1].Text != " look [this], a&b" || g.Parts[2].Text != "178" ||
				g.Parts[3].Media.URL != "http://127.0.0.1:1/a.jpg" || g.Parts[4].MessageID != "77" {
				t.Errorf("parts = %+v", g.Parts)
			}
			p := s.msgs[1]
			if p.Chat != (bridge.Chat{Kind: bridge.Private, ID: "2"}) || p.From.Name != "bob" || p.Parts[0].Kind != bridge.PartVoice {
				t.Errorf("private message = %+v", p)
			}
		})
	}
}

func TestReverseRefusesWrongTokensAndBrowsers(t *testing.T) {
	_, s, url, logs := reverseRig(t, "s3cret")
	for _, tc := range []struct {
		name   string
		token  string
		status int
	}{
		{"wrong", "guess", http.StatusForbidden},
		{"missing", "", http.StatusUnauthorized},
	} {
		impl := &onebottest.Impl{SelfID: 10001, Token: tc.token}
		err := impl.Connect(context.Background(), url)
		var re *onebottest.RefusedError
		if !errors.As(err, &re) || re.Status != tc.status {
			t.Errorf("%s token: %v, want HTTP %d", tc.name, err, tc.status)
		}
	}
	if l := logs.String(); !strings.Contains(l, "wrong access token") || !strings.Contains(l, "missing access token") {
		t.Errorf("the log does not say why:\n%s", l)
	}
	req, _ := http.NewRequest("GET", "http"+strings.TrimPrefix(url, "ws")+"?access_token=s3cret", nil)
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a browser Origin got HTTP %d, want 403", resp.StatusCode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.self) != 0 || len(s.problems) == 0 {
		t.Errorf("connected %v, problems %v", s.self, s.problems)
	}
	// The token may also come as ?access_token= and the path may name the bridge.
	impl := &onebottest.Impl{SelfID: 10001}
	if err := impl.Connect(context.Background(), url+"/qq?access_token=s3cret"); err != nil {
		t.Errorf("?access_token= on the named path: %v", err)
	}
}

func TestSendMatchesEchoesInBothFormatsAndMapsFailures(t *testing.T) {
	for _, format := range []string{"array", "string"} {
		t.Run(format, func(t *testing.T) {
			a, s, url, _ := reverseRig(t, "")
			a.o.Format = format
			impl := &onebottest.Impl{SelfID: 10001}
			ctx := context.Background()
			if _, err := a.Send(ctx, bridge.Chat{Kind: bridge.Group, ID: "555"}, bridge.Outgoing{}); !errors.Is(err, bridge.ErrOffline) {
				t.Errorf("send while offline: %v", err)
			}
			if err := impl.Connect(ctx, url); err != nil {
				t.Fatal(err)
			}
			s.until(t, "connected", func() bool { return len(s.self) > 0 })
			out := bridge.Outgoing{Parts: []bridge.OutPart{{Kind: bridge.PartText, Text: "hi [1], "},
				{Kind: bridge.PartMention, UserID: "1", Text: "alice"}, {Kind: bridge.PartReply, MessageID: "77"}}}
			var wg sync.WaitGroup
			ids := make([]string, 5)
			for i := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id, err := a.Send(ctx, bridge.Chat{Kind: bridge.Group, ID: "555"}, out)
					if err != nil {
						t.Error(err)
					}
					ids[i] = id
				}()
			}
			wg.Wait()
			seen := map[string]bool{}
			for _, id := range ids {
				if id == "" || seen[id] {
					t.Errorf("ids = %v: each send gets its own message_id through its echo", ids)
				}
				seen[id] = true
			}
			calls := impl.Calls("send_group_msg")
			if len(calls) != 5 || calls[0].Text() != "<reply 77>hi [1], @<1>" || string(calls[0].Params["group_id"]) != "555" {
				t.Fatalf("calls = %+v (%q)", calls, calls[0].Text())
			}
			if _, err := a.Send(ctx, bridge.Chat{Kind: bridge.Private, ID: "2"}, out); err != nil {
				t.Fatal(err)
			}
			if c := impl.Calls("send_private_msg"); len(c) != 1 || string(c[0].Params["user_id"]) != "2" {
				t.Errorf("private calls = %+v", c)
			}
			impl.FailNext("send_group_msg", onebottest.Failure{Retcode: 100, Wording: "bot is muted in this group"})
			_, err := a.Send(ctx, bridge.Chat{Kind: bridge.Group, ID: "555"}, out)
			var se *bridge.SendError
			if !errors.As(err, &se) || se.Temporary || !strings.Contains(se.Msg, "muted") {
				t.Errorf("a failed send: %v", err)
			}
		})
	}
}

func TestTypingInPrivateChatsOnly(t *testing.T) {
	a, s, url, _ := reverseRig(t, "")
	impl := &onebottest.Impl{SelfID: 10001}
	if err := impl.Connect(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	s.until(t, "connected", func() bool { return len(s.self) > 0 })
	ctx := context.Background()
	if err := a.Typing(ctx, bridge.Chat{Kind: bridge.Group, ID: "5"}); !errors.Is(err, bridge.ErrUnsupported) {
		t.Errorf("typing in a group: %v", err)
	}
	if err := a.Typing(ctx, bridge.Chat{Kind: bridge.Private, ID: "2"}); err != nil {
		t.Fatal(err)
	}
	c := impl.Calls("set_input_status")
	if len(c) != 1 || string(c[0].Params["user_id"]) != "2" || string(c[0].Params["event_type"]) != "1" {
		t.Errorf("calls = %+v", c)
	}
	impl.NoTyping = true
	if err := a.Typing(ctx, bridge.Chat{Kind: bridge.Private, ID: "2"}); !errors.Is(err, bridge.ErrUnsupported) {
		t.Errorf("typing on an implementation without set_input_status: %v", err)
	}
}

func TestMalformedFramesAreSkipped(t *testing.T) {
	_, s, url, logs := reverseRig(t, "")
	impl := &onebottest.Impl{SelfID: 10001}
	if err := impl.Connect(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	s.until(t, "connected", func() bool { return len(s.self) > 0 })
	for _, raw := range []string{`not json`, `[1,2]`, `{"post_type":"message","message_type":"group","user_id":1}`,
		`{"post_type":"message","message_type":"group","group_id":5,"user_id":"x1","message":"hi"}`, `{"foo":1}`,
		`{"post_type":"message","message_type":"channel","user_id":1,"message":"x"}`,
		`{"post_type":"message","message_type":"private","user_id":1,"message":[{"data":{}}]}`} {
		if err := impl.Raw([]byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	impl.Group(5, onebottest.Sender{UserID: 3, Nickname: "carol"}, onebottest.Text("still here"))
	s.until(t, "the good message after the bad ones", func() bool { return len(s.msgs) == 1 })
	s.mu.Lock()
	n := len(s.problems)
	s.mu.Unlock()
	if n != 7 || !strings.Contains(logs.String(), "malformed frame skipped") {
		t.Errorf("problems = %d, want 7; log:\n%s", n, logs.String())
	}
}

// instant is a clock whose waits end at once.
