package telegram

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/tgtest"
	"github.com/cyan-agent/cyan/router"
)

// recAgent is the companion as the bridge hands it what it hears: the
// stored lines (speaker and text, as the prompt shows them), the platform
// lines (notes), edits, resets and turns.
type recAgent struct {
	mu     sync.Mutex
	stored []bridge.Inbound
	notes  []string
	turns  []bridge.Turn
	resets []string
	owners map[string]bool
}

func (a *recAgent) Record(_ context.Context, in bridge.Inbound) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stored = append(a.stored, in)
	return fmt.Sprint("m", len(a.stored)), nil
}

func (a *recAgent) Edit(_ context.Context, channel, ext, text string, _ time.Time) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, s := range a.stored {
		if s.Channel == channel && s.ExternalID == ext {
			a.stored[i].Text = text
			return fmt.Sprint("m", i+1), nil
		}
	}
	return "", bridge.ErrNotStored
}

func (a *recAgent) Reset(_ context.Context, channel string, _ bridge.Kind, by string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.resets = append(a.resets, channel+" by "+by)
	return nil
}

func (a *recAgent) Answer(_ context.Context, t bridge.Turn) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.turns = append(a.turns, t)
	return nil
}

func (a *recAgent) Note(_ context.Context, channel string, _ bridge.Kind, text string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notes = append(a.notes, channel+": "+text)
	return nil
}

func (a *recAgent) Quoted(string) string { return "" }
func (a *recAgent) Owner(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.owners[id]
}
func (a *recAgent) Answered(string, string) bool { return false }

func (a *recAgent) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) { // polling the recorder
		a.mu.Lock()
		ok := cond()
		a.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			a.mu.Lock()
			defer a.mu.Unlock()
			t.Fatalf("timed out waiting for %s; stored %+v, notes %q, turns %+v", what, a.stored, a.notes, a.turns)
		}
	}
}

// bridgeRig runs a bridge over the Telegram adapter against the fake Bot
// API.
func bridgeRig(t *testing.T) (*bridge.Bridge, *tgtest.Server, *recAgent) {
	t.Helper()
	fake := &tgtest.Server{Token: "123:abc", Bot: botUser}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	a, err := New(Options{Name: "tg", Token: "123:abc", APIURL: srv.URL, PollTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	agent := &recAgent{owners: map[string]bool{"tg:9": true}}
	m := config.DefaultManners()
	m.Debounce, m.MaxWait, m.ReplyDelay = 0, 0, 0
	b, err := bridge.New(bridge.Options{Name: "tg", Adapter: a, Agent: agent, Manners: m, AgentName: func() string { return "cyan" },
		Attach: func(ctx context.Context, _ router.Component) error { <-ctx.Done(); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("bridge Run: %v", err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); !b.Status().Connected; time.Sleep(5 * time.Millisecond) { // polling the status
		if time.Now().After(deadline) {
			t.Fatalf("not connected: %+v", b.Status())
		}
	}
	return b, fake, agent
}

// TestWhatTheModelSeesOfEachTelegramUpdateKind pushes each kind of update
// as telegram-bot-api writes it and checks the line the model's prompt
// gets: who says what, or the platform line a service message becomes.
func TestWhatTheModelSeesOfEachTelegramUpdateKind(t *testing.T) {
	_, fake, agent := bridgeRig(t)
	group := map[string]any{"id": grp.ID, "type": "supergroup", "title": grp.Title}
	news := map[string]any{"id": -1009, "type": "channel", "title": "Cyan News", "username": "cyannews"}
	user := func(u tgtest.User) map[string]any {
		return map[string]any{"id": u.ID, "is_bot": u.IsBot, "first_name": u.FirstName, "username": u.Username}
	}
	bob := tgtest.User{ID: 2, FirstName: "Bob", Username: "bob"}
	for _, tc := range []struct {
		name string
		m    tgtest.Update
		user string // "": a platform line
		want string
	}{
		{"anonymous admin", tgtest.Update{"from": user(tgtest.GroupAnonymousBot), "sender_chat": group, "chat": group, "text": "rules updated"},
			"friends", "rules updated"},
		{"anonymous admin with a signature", tgtest.Update{"from": user(tgtest.GroupAnonymousBot), "sender_chat": group, "author_signature": "Mod",
			"chat": group, "text": "be kind"}, "friends (Mod)", "be kind"},
		{"linked channel's automatic forward", tgtest.Update{"from": user(tgtest.ServiceUser), "sender_chat": news, "chat": group,
			"is_automatic_forward": true, "forward_origin": map[string]any{"type": "channel", "chat": news, "message_id": 5, "date": 1},
			"text": "v2 is out"}, "Cyan News", "[a post of the linked channel] v2 is out"},
		{"a channel speaking", tgtest.Update{"from": user(tgtest.ChannelBot), "sender_chat": news, "chat": group, "text": "hello from the channel"},
			"Cyan News", "hello from the channel"},
		{"document", tgtest.Update{"from": user(*amy), "chat": group, "document": map[string]any{"file_id": "f1", "file_unique_id": "u1",
			"file_name": "notes.txt", "file_size": 2048}}, "Amy", "[file notes.txt (2 KB)]"},
		{"join", tgtest.Update{"from": user(*amy), "chat": group, "new_chat_members": []any{user(bob)}},
			"", "tg:group:-1001: @Bob joined the group, added by @Amy"},
		{"join by link", tgtest.Update{"from": user(bob), "chat": group, "new_chat_members": []any{user(bob)}},
			"", "tg:group:-1001: @Bob joined the group"},
		{"the bot added", tgtest.Update{"from": user(*amy), "chat": group, "new_chat_members": []any{user(botUser)}},
			"", "tg:group:-1001: you joined the group, added by @Amy"},
		{"leave", tgtest.Update{"from": user(bob), "chat": group, "left_chat_member": user(bob)},
			"", "tg:group:-1001: @Bob left the group"},
		{"rename", tgtest.Update{"from": user(*amy), "chat": group, "new_chat_title": "best friends"},
			"", "tg:group:-1001: @Amy renamed the group to «best friends»"},
		{"pin", tgtest.Update{"from": user(*amy), "chat": group, "pinned_message": map[string]any{"message_id": 3, "date": 5,
			"chat": group, "from": user(bob), "text": "meet at 6"}}, "", "tg:group:-1001: @Amy pinned a message: «meet at 6»"},
		{"upgrade", tgtest.Update{"from": user(*amy), "chat": map[string]any{"id": -55, "type": "group", "title": "old"},
			"migrate_to_chat_id": -1000055}, "", "tg:group:-55: the group was upgraded to a supergroup (its new id is -1000055)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent.mu.Lock()
			stored, notes := len(agent.stored), len(agent.notes)
			agent.mu.Unlock()
			fake.PushUpdate("message", tc.m)
			var got, who string
			agent.until(t, tc.name, func() bool {
				switch {
				case len(agent.stored) > stored:
					got, who = agent.stored[stored].Text, agent.stored[stored].User
					return true
				case len(agent.notes) > notes:
					got, who = agent.notes[notes], ""
					return true
				}
				return false
			})
			if who != tc.user || got != tc.want {
				t.Errorf("the model sees ^%s: %q; want ^%s: %q", who, got, tc.user, tc.want)
			}
		})
	}
}

// TestAnEditUpdatesTheStoredTextAndIsAnsweredWhenItAddressesTheBot: an
// edited_message replaces the stored text; an edit that adds the bot's
// mention asks for a turn; a second edit does not ask again.
func TestAnEditUpdatesTheStoredTextAndIsAnsweredWhenItAddressesTheBot(t *testing.T) {
	_, fake, agent := bridgeRig(t)
	id := fake.Push(tgtest.Message{From: amy, Chat: grp, Text: "who knows the time"})
	agent.until(t, "stored", func() bool { return len(agent.stored) == 1 })
	fake.PushEdit(id, tgtest.Message{From: amy, Chat: grp, Text: "who knows the time @cyan_bot",
		Entities: []tgtest.Entity{{Type: "mention", Offset: 19, Length: 9}}})
	agent.until(t, "the edit stored and answered", func() bool {
		return agent.stored[0].Text == "who knows the time @cyan" && len(agent.turns) == 1
	})
	fake.PushEdit(id, tgtest.Message{From: amy, Chat: grp, Text: "who knows the time, @cyan_bot?",
		Entities: []tgtest.Entity{{Type: "mention", Offset: 20, Length: 9}}})
	agent.until(t, "the second edit stored", func() bool { return strings.Contains(agent.stored[0].Text, "time, @cyan?") })
	time.Sleep(50 * time.Millisecond) // a second turn would have been asked by now
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if len(agent.stored) != 1 || len(agent.turns) != 1 {
		t.Errorf("stored %d, turns %d; want the edits in place and one turn", len(agent.stored), len(agent.turns))
	}
}

// TestTelegramChatCommands: /help, /start, /reset and the owner's /pause
// are answered at once by the bridge as replies, kept out of the
// conversation and of any turn; /help@another_bot is not ours.
func TestTelegramChatCommands(t *testing.T) {
	b, fake, agent := bridgeRig(t)
	owner := &tgtest.User{ID: 9, FirstName: "Hareru"}
	cmd := func(from *tgtest.User, chat tgtest.Chat, text string) int {
		n := len(strings.Fields(text)[0])
		return fake.Push(tgtest.Message{From: from, Chat: chat, Text: text, Entities: []tgtest.Entity{{Type: "bot_command", Offset: 0, Length: n}}})
	}
	wantReply := func(n int, id int, has string) {
		t.Helper()
		calls, err := fake.WaitCalls(context.Background(), n, "sendMessage")
		if err != nil {
			t.Fatal(err)
		}
		c := calls[n-1]
		if !strings.Contains(c.Params["text"], has) {
			t.Errorf("answer %d = %q, want %q in it", n, c.Params["text"], has)
		}
		if id != 0 && !strings.Contains(c.Params["reply_parameters"], fmt.Sprint(id)) {
			t.Errorf("answer %d replies %q, want message %d", n, c.Params["reply_parameters"], id)
		}
	}
	id := cmd(amy, grp, "/help")
	wantReply(1, id, "I answer when you @mention me")
	id = cmd(amy, grp, "/help@cyan_bot")
	wantReply(2, id, "/reset")
	pm := tgtest.Chat{ID: 1, Type: "private"}
	cmd(amy, pm, "/start")
	wantReply(3, 0, "Write to me and I answer")
	id = cmd(amy, grp, "/reset@cyan_bot")
	wantReply(4, id, "New topic")
	id = cmd(amy, grp, "/pause")
	wantReply(5, id, "Only my owner")
	id = cmd(owner, grp, "/pause")
	wantReply(6, id, "Paused")
	if !b.Paused("tg:group:-1001") {
		t.Error("the owner's /pause did not pause the chat")
	}
	id = cmd(owner, grp, "/resume")
	wantReply(7, id, "Resumed")
	cmd(amy, grp, "/help@another_bot")
	fake.Push(tgtest.Message{From: amy, Chat: grp, Text: "after the commands"})
	agent.until(t, "the plain lines stored", func() bool { return len(agent.stored) == 2 })
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if agent.stored[0].Text != "/help@another_bot" || agent.stored[1].Text != "after the commands" {
		t.Errorf("stored %+v; want only the other bot's command and the plain line", agent.stored)
	}
	if len(agent.turns) != 0 {
		t.Errorf("turns %+v; commands are no one's turn", agent.turns)
	}
	if len(agent.resets) != 1 || agent.resets[0] != "tg:group:-1001 by Amy" {
		t.Errorf("resets = %q", agent.resets)
	}
	if n := len(fake.Calls("sendMessage")); n != 7 {
		t.Errorf("%d answers, want 7", n)
	}
}
