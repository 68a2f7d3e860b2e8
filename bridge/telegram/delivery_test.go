package telegram

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/bridgetest"
	"github.com/cyan-agent/cyan/internal/tgtest"
)

// Time in these tests runs 50 times fast: the Bot API answering a send
// after 6 s is late, and the 5 s cyan used to wait is oldWait.
const (
	late    = 6 * time.Second / 50
	oldWait = 5 * time.Second / 50
)

type e2e struct {
	b     *bridge.Bridge
	agent *bridgetest.Agent
	out   *bridgetest.Outbox
	fake  *tgtest.Server
}

func newE2E(t *testing.T, sendTimeout time.Duration, reply func(bridge.Turn, []bridge.Inbound) string) *e2e {
	t.Helper()
	fake := &tgtest.Server{Token: "123:abc", Bot: botUser}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	a, err := New(Options{Name: "tg", Token: "123:abc", APIURL: srv.URL, PollTimeout: time.Second, SendTimeout: sendTimeout})
	if err != nil {
		t.Fatal(err)
	}
	out := bridgetest.NewOutbox()
	out.Retry = func(int) time.Duration { return 20 * time.Millisecond }
	agent := &bridgetest.Agent{Out: out, Reply: reply}
	m := config.DefaultManners()
	m.Debounce, m.MaxWait, m.ReplyDelay, m.CharDelay, m.TypingEvery = config.Duration(20*time.Millisecond), 0, 0, 0, 0
	b, err := bridge.New(bridge.Options{Name: "tg", Adapter: a, Agent: agent, Attach: out.Attach, Queue: out.Pending, Manners: m,
		AgentName: func() string { return "cyan" }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	waitFor(t, "connected", func() bool { return b.Status().Connected })
	return &e2e{b: b, agent: agent, out: out, fake: fake}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A send the Bot API answers after 6 s is posted once: cyan waits for it;
// and when its wait is shorter than the answer (the 5 s it used to wait),
// it does not send it again — one late message rather than two — and says
// the outcome is unknown, to the status and to the model.
func TestATelegramSendConfirmedLateIsPostedOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
	}{{"waits", 0}, {"cyan-gives-up-first", oldWait}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newE2E(t, tc.timeout, nil)
			r.fake.SendDelay = late
			r.fake.Push(tgtest.Message{From: amy, Chat: tgtest.Chat{ID: 5, Type: "private"}, Text: "what time is it?"})
			waitFor(t, "the answer acknowledged", func() bool { return r.out.Pending() == 0 && len(r.fake.Posted(5)) > 0 })
			time.Sleep(3 * late) // anything more would come by now
			if got := r.fake.Posted(5); len(got) != 1 || got[0] != "re: what time is it?" {
				t.Errorf("posted %q, want the answer once", got)
			}
			if n := len(r.fake.Calls("sendMessage")); n != 1 {
				t.Errorf("%d sendMessage calls, want 1", n)
			}
			st := r.b.Status()
			if tc.timeout == 0 {
				if st.Sent != 1 || st.Unknown != 0 || len(st.Undelivered) != 0 || len(r.agent.Notes()) != 0 {
					t.Errorf("status %+v notes %q: delivered", st, r.agent.Notes())
				}
				return
			}
			if st.Unknown != 1 || st.Failed != 0 || len(st.Undelivered) != 1 || st.Undelivered[0].Outcome != bridge.OutcomeUnknown {
				t.Errorf("status %+v: the outcome is unknown, not a failure", st)
			}
			if n := r.agent.NotesAbout("tg:private:5", "may not have reached"); len(n) != 1 {
				t.Errorf("notes %q: the model is told it may not have arrived", r.agent.Notes())
			}
		})
	}
}

// A group upgraded to a supergroup keeps its conversation: the answer in
// flight when it moved is delivered in the supergroup, and what is said
// there joins the group's channel — one channel, with the earlier context
// — whether the bridge learns of the move from the refused send or from
// the service messages.
func TestAMigratedGroupIsAnsweredInTheSupergroupWithItsContext(t *testing.T) {
	for _, service := range []bool{false, true} {
		t.Run(fmt.Sprint("service=", service), func(t *testing.T) {
			const old, super = -500, -100500
			var r *e2e
			first := true
			r = newE2E(t, 0, func(tn bridge.Turn, hist []bridge.Inbound) string {
				if first && !service {
					first = false
					r.fake.Migrate(old, super, amy, false) // upgraded while the answer is written
				}
				var said []string
				for _, m := range hist {
					if m.Text != "" {
						said = append(said, m.Text)
					}
				}
				return fmt.Sprintf("%s: I know %d things (%s)", tn.Channel, len(said), strings.Join(said, " | "))
			})
			group := tgtest.Chat{ID: old, Type: "group", Title: "friends"}
			r.fake.Push(tgtest.Message{From: amy, Chat: group, Text: "@cyan_bot my cat is Miso",
				Entities: []tgtest.Entity{{Type: "mention", Offset: 0, Length: 9}}})
			if service {
				waitFor(t, "the first answer", func() bool { return len(r.fake.Posted(old)) == 1 })
				r.fake.Migrate(old, super, amy, true)
			} else {
				waitFor(t, "the answer in flight, in the supergroup", func() bool { return len(r.fake.Posted(super)) == 1 })
			}
			r.fake.Push(tgtest.Message{From: amy, Chat: tgtest.Chat{ID: super, Type: "supergroup", Title: "friends"},
				Text: "@cyan_bot what is my cat called?", Entities: []tgtest.Entity{{Type: "mention", Offset: 0, Length: 9}}})
			want := 2
			if service {
				want = 1
			}
			waitFor(t, "the answer in the supergroup", func() bool { return len(r.fake.Posted(super)) == want })
			got := r.fake.Posted(super)
			last := got[len(got)-1]
			if !strings.HasPrefix(last, "tg:group:-500: ") || !strings.Contains(last, "my cat is Miso") || !strings.Contains(last, "what is my cat called?") {
				t.Errorf("answered %q in the supergroup: want the group's channel, with the earlier context", last)
			}
			for _, ch := range r.agent.Channels() {
				if strings.Contains(ch, "100500") {
					t.Errorf("a second channel %s: the supergroup is the group's alias", ch)
				}
			}
			if st := r.b.Status(); st.Failed != 0 || len(st.Undelivered) != 0 {
				t.Errorf("status %+v", st)
			}
		})
	}
}

// A group where an admin took the bot's right to send holds only its own
// answers: nothing is sent into it while my_chat_member says so, a private
// message is answered meanwhile, and the held answer goes once the right
// is given back.
func TestARestrictedGroupHoldsOnlyItsOwnAnswers(t *testing.T) {
	r := newE2E(t, 0, nil)
	group := tgtest.Chat{ID: -1009, Type: "supergroup", Title: "friends"}
	r.fake.RestrictBot(group, amy, time.Time{})
	waitFor(t, "the mute", func() bool { return r.b.Status().Muted == 1 })
	r.fake.Push(tgtest.Message{From: amy, Chat: group, Text: "@cyan_bot are you there?", Entities: []tgtest.Entity{{Type: "mention", Offset: 0, Length: 9}}})
	r.fake.Push(tgtest.Message{From: amy, Chat: tgtest.Chat{ID: 5, Type: "private"}, Text: "ping"})
	waitFor(t, "the private answer", func() bool { return len(r.fake.Posted(5)) == 1 })
	for _, c := range r.fake.Calls("sendMessage") {
		if c.Params["chat_id"] == "-1009" {
			t.Errorf("sent into the restricted group: %q", c.Params["text"])
		}
	}
	r.fake.LiftBot(group, amy)
	waitFor(t, "the held answer", func() bool { return len(r.fake.Posted(-1009)) == 1 })
	if st := r.b.Status(); st.Failed != 0 || st.Muted != 0 {
		t.Errorf("status %+v", st)
	}
}
