package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/internal/tgtest"
)

type sink struct {
	mu       sync.Mutex
	msgs     []*bridge.Message
	self     []bridge.User
	problems []error
}

func (s *sink) Inbound(_ context.Context, m *bridge.Message) {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
}
func (s *sink) Connected(u bridge.User) { s.mu.Lock(); s.self = append(s.self, u); s.mu.Unlock() }
func (s *sink) Disconnected(error)      {}
func (s *sink) Problem(err error)       { s.mu.Lock(); s.problems = append(s.problems, err); s.mu.Unlock() }

func (s *sink) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		ok := cond()
		s.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

var (
	botUser = tgtest.User{ID: 777, IsBot: true, FirstName: "Cyan", Username: "cyan_bot"}
	amy     = &tgtest.User{ID: 1, FirstName: "Amy", Username: "amy"}
	grp     = tgtest.Chat{ID: -1001, Type: "supergroup", Title: "friends"}
)

func rig(t *testing.T, token string) (*Adapter, *tgtest.Server, *sink, func() error) {
	t.Helper()
	fake := &tgtest.Server{Token: "123:abc", Bot: botUser}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	a, err := New(Options{Name: "tg", Token: token, APIURL: srv.URL, PollTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := new(sink)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, s) }()
	return a, fake, s, func() error { cancel(); return <-done }
}

func TestPollingMentionsRepliesCommandsAndSending(t *testing.T) {
	a, fake, s, stop := rig(t, "123:abc")
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	s.until(t, "connected", func() bool { return len(s.self) == 1 })
	if c := fake.Calls("deleteWebhook"); len(c) != 1 {
		t.Errorf("deleteWebhook calls: %d", len(c))
	}
	if s.self[0].ID != "777" || s.self[0].Username != "cyan_bot" {
		t.Errorf("self = %+v", s.self[0])
	}
	// "🙂 @cyan_bot hi": the emoji is two UTF-16 units.
	fake.Push(tgtest.Message{From: amy, Chat: grp, Text: "🙂 @cyan_bot hi", Entities: []tgtest.Entity{{Type: "mention", Offset: 3, Length: 9}}})
	fake.Push(tgtest.Message{From: amy, Chat: grp, Text: "/ask@cyan_bot why", Entities: []tgtest.Entity{{Type: "bot_command", Offset: 0, Length: 13}}})
	fake.Push(tgtest.Message{From: amy, Chat: grp, Text: "/ask@other_bot x", Entities: []tgtest.Entity{{Type: "bot_command", Offset: 0, Length: 14}}})
	fake.Push(tgtest.Message{From: amy, Chat: grp, Text: "and?", ReplyTo: &tgtest.Message{MessageID: 9, From: &botUser, Chat: grp, Text: "earlier"}})
	fake.Push(tgtest.Message{From: amy, Chat: tgtest.Chat{ID: 1, Type: "private"}, Text: "hello"})
	s.until(t, "five messages", func() bool { return len(s.msgs) == 5 })
	s.mu.Lock()
	m := s.msgs
	s.mu.Unlock()
	if m[0].Chat != (bridge.Chat{Kind: bridge.Group, ID: "-1001"}) || m[0].From.Name != "Amy" || m[0].Parts[1].Kind != bridge.PartMention || m[0].Parts[1].UserID != "777" || m[0].Parts[0].Text != "🙂 " {
		t.Errorf("mention: %+v", m[0].Parts)
	}
	if m[1].Command != "ask" || m[2].Command != "" {
		t.Errorf("commands: %q %q", m[1].Command, m[2].Command)
	}
	if r := m[3].Parts[0]; r.Kind != bridge.PartReply || !r.ToSelf || r.MessageID != "9" {
		t.Errorf("reply: %+v", r)
	}
	if m[4].Chat.Kind != bridge.Private {
		t.Errorf("private: %+v", m[4].Chat)
	}
	out := bridge.Outgoing{Parts: []bridge.OutPart{{Kind: bridge.PartReply, MessageID: "9"}, {Kind: bridge.PartText, Text: "🙂 hi "},
		{Kind: bridge.PartMention, UserID: "1", Text: "Amy"}, {Kind: bridge.PartText, Text: "!"}}}
	id, err := a.Send(context.Background(), bridge.Chat{Kind: bridge.Group, ID: "-1001"}, out)
	if err != nil || id == "" {
		t.Fatalf("send: %q %v", id, err)
	}
	c := fake.Calls("sendMessage")[0].Params
	var ents []tgtest.Entity
	json.Unmarshal([]byte(c["entities"]), &ents)
	if c["text"] != "🙂 hi Amy!" || c["chat_id"] != "-1001" || len(ents) != 1 || ents[0].Type != "text_mention" || ents[0].Offset != 6 || ents[0].Length != 3 || ents[0].User.ID != 1 {
		t.Errorf("sendMessage %v", c)
	}
	if !strings.Contains(c["reply_parameters"], `"message_id":9`) {
		t.Errorf("reply_parameters %q", c["reply_parameters"])
	}
	if err := a.Typing(context.Background(), bridge.Chat{Kind: bridge.Group, ID: "-1001"}); err != nil {
		t.Fatal(err)
	}
	if c := fake.Calls("sendChatAction"); len(c) != 1 || c[0].Params["action"] != "typing" {
		t.Errorf("sendChatAction %v", c)
	}
	fake.FailSend(tgtest.Failure{Code: 429, Description: "Too Many Requests: retry after 7", RetryAfter: 7})
	_, err = a.Send(context.Background(), bridge.Chat{Kind: bridge.Group, ID: "-1001"}, out)
	var se *bridge.SendError
	if !errors.As(err, &se) || !se.Temporary || se.RetryAfter != 7*time.Second {
		t.Errorf("rate limited: %v", err)
	}
	fake.FailSend(tgtest.Failure{Code: 403, Description: "Forbidden: bot was kicked from the supergroup chat"})
	if _, err = a.Send(context.Background(), bridge.Chat{Kind: bridge.Group, ID: "-1001"}, out); !errors.As(err, &se) || se.Temporary {
		t.Errorf("kicked: %v", err)
	}
}

func TestAWrongTokenStopsWithAClearError(t *testing.T) {
	_, _, s, stop := rig(t, "999:wrong")
	s.until(t, "a problem", func() bool { return len(s.problems) > 0 })
	s.mu.Lock()
	p := s.problems[0]
	s.mu.Unlock()
	if !errors.Is(p, ErrToken) || !strings.Contains(p.Error(), "@BotFather") {
		t.Errorf("problem = %v", p)
	}
	stop()
	if _, err := New(Options{Token: "nocolon"}); err == nil {
		t.Error("a malformed token was accepted")
	}
}

func TestPhotosAreFetchedThroughGetFile(t *testing.T) {
	_, fake, s, stop := rig(t, "123:abc")
	defer stop()
	png := []byte("\x89PNG\r\n\x1a\n0000")
	fake.AddFile("ph1", png)
	fake.Push(tgtest.Message{From: amy, Chat: grp, Caption: "look", Photo: []tgtest.PhotoSize{{FileID: "small", FileUniqueID: "s"}, {FileID: "ph1", FileUniqueID: "p", FileSize: len(png)}}})
	s.until(t, "the photo", func() bool { return len(s.msgs) == 1 })
	s.mu.Lock()
	m := s.msgs[0]
	s.mu.Unlock()
	if m.Parts[0].Kind != bridge.PartImage || m.Parts[1].Text != "look" {
		t.Fatalf("parts %+v", m.Parts)
	}
	data, err := m.Parts[0].Media.Fetch(context.Background(), 1<<20)
	if err != nil || string(data) != string(png) {
		t.Errorf("fetch: %q %v", data, err)
	}
	if _, err := m.Parts[0].Media.Fetch(context.Background(), 4); err == nil {
		t.Error("a file over the limit was fetched")
	}
}

func TestRenderCountsUTF16(t *testing.T) {
	text, ents, reply := render(bridge.Outgoing{Parts: []bridge.OutPart{{Kind: bridge.PartText, Text: "𝄞é "},
		{Kind: bridge.PartMention, UserID: "5", Text: "Zoë"}, {Kind: bridge.PartReply, MessageID: "3"}}})
	if text != "𝄞é Zoë" || reply != 3 || len(ents) != 1 || ents[0].Offset != 4 || ents[0].Length != 3 || ents[0].Type != models.MessageEntityTypeTextMention {
		t.Errorf("%q %+v %d", text, ents, reply)
	}
}

// TestABotAPIDownEndsTheRunForTheSupervisor: a Bot API that answers 502
// ends Run with the getMe error (reported as a problem; not ErrToken, so
// the supervisor restarts it); the same adapter, run again once the API is
// back, connects.
func TestABotAPIDownEndsTheRunForTheSupervisor(t *testing.T) {
	fake := &tgtest.Server{Token: "123:abc", Bot: botUser}
	var down atomic.Bool
	down.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, `{"ok":false,"error_code":502,"description":"Bad Gateway"}`, http.StatusBadGateway)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	a, err := New(Options{Name: "tg", Token: "123:abc", APIURL: srv.URL, PollTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := new(sink)
	err = a.Run(context.Background(), s)
	if err == nil || errors.Is(err, ErrToken) || !strings.Contains(err.Error(), "getMe") {
		t.Fatalf("Run with the API down = %v, want the getMe error", err)
	}
	if len(s.problems) != 1 || s.problems[0] != err {
		t.Errorf("problems = %v", s.problems)
	}
	down.Store(false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, s) }()
	s.until(t, "a connection", func() bool { return len(s.self) == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after ctx ended = %v, want nil", err)
	}
}
