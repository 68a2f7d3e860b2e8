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
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/onebottest"
	"github.com/cyan-agent/cyan/router"
)

// recAgent is the companion as the bridge hands it what it hears: the
// stored lines (speaker and text, as the prompt shows them), the platform
// lines (notes), edits, recalls, resets and turns.
type recAgent struct {
	mu       sync.Mutex
	stored   []bridge.Inbound
	notes    []string
	turns    []bridge.Turn
	recalled []string
	resets   []string
	owners   map[string]bool
	changed  chan struct{}
}

func newRecAgent() *recAgent {
	return &recAgent{changed: make(chan struct{}, 1000), owners: map[string]bool{}}
}

func (a *recAgent) poke() {
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

func (a *recAgent) Record(_ context.Context, in bridge.Inbound) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.stored {
		if in.ExternalID != "" && s.Channel == in.Channel && s.ExternalID == in.ExternalID {
			return "", bridge.ErrDuplicate
		}
	}
	a.stored = append(a.stored, in)
	a.poke()
	return fmt.Sprint("m", len(a.stored)), nil
}

func (a *recAgent) Edit(_ context.Context, channel, ext, text string, _ time.Time) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, s := range a.stored {
		if s.Channel == channel && s.ExternalID == ext {
			a.stored[i].Text = text
			a.poke()
			return fmt.Sprint("m", i+1), nil
		}
	}
	return "", bridge.ErrNotStored
}

func (a *recAgent) RecallOwn(_ context.Context, channel, id string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recalled = append(a.recalled, channel+" "+id)
	a.poke()
	return "the weather is fine", nil
}

func (a *recAgent) Recall(_ context.Context, channel, ext string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recalled = append(a.recalled, channel+" ext "+ext)
	a.poke()
	return nil
}

func (a *recAgent) Reset(_ context.Context, channel string, _ bridge.Kind, by string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.resets = append(a.resets, channel+" by "+by)
	a.poke()
	return nil
}

func (a *recAgent) Answer(_ context.Context, t bridge.Turn) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.turns = append(a.turns, t)
	a.poke()
	return nil
}

func (a *recAgent) Note(_ context.Context, channel string, _ bridge.Kind, text string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notes = append(a.notes, channel+": "+text)
	a.poke()
	return nil
}

func (a *recAgent) Quoted(string) string { return "" }
func (a *recAgent) Owner(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.owners[id]
}
func (a *recAgent) Answered(string, string) bool { return false }

// until waits for cond (read under the agent's lock), failing after 10 s.
func (a *recAgent) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		a.mu.Lock()
		ok := cond()
		a.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-a.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			a.mu.Lock()
			defer a.mu.Unlock()
			t.Fatalf("timed out waiting for %s; stored %+v, notes %q", what, a.stored, a.notes)
		}
	}
}

// bridgeRig is a bridge over a reverse-mode adapter, with NapCat's
// stand-in connected.
type bridgeRig struct {
	b     *bridge.Bridge
	a     *Adapter
	agent *recAgent
	impl  *onebottest.Impl
	url   string // the reverse WebSocket
}

func newBridgeRig(t *testing.T, tweak func(*bridge.Options), impl ...func(*onebottest.Impl)) *bridgeRig {
	t.Helper()
	a, err := New(Options{Name: "qq", Mode: "reverse", AccessToken: "tok", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewReverseMux(nil, map[string]*Adapter{"qq": a}))
	t.Cleanup(srv.Close)
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + ReversePath
	r := &bridgeRig{a: a, agent: newRecAgent(), impl: &onebottest.Impl{SelfID: 10001, Nickname: "青蓝", Token: "tok"}, url: url}
	m := config.DefaultManners()
	m.Debounce, m.MaxWait, m.ReplyDelay = 0, 0, 0
	o := bridge.Options{Name: "qq", Adapter: a, Agent: r.agent, Manners: m, AgentName: func() string { return "cyan" },
		Attach: func(ctx context.Context, _ router.Component) error { <-ctx.Done(); return nil }}
	if tweak != nil {
		tweak(&o)
	}
	for _, f := range impl {
		f(r.impl)
	}
	b, err := bridge.New(o)
	if err != nil {
		t.Fatal(err)
	}
	r.b = b
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("bridge Run: %v", err)
		}
	})
	if err := r.impl.Connect(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, "connected", func(s bridge.Status) bool { return s.Connected && s.Self == "10001" })
	return r
}

func (r *bridgeRig) waitStatus(t *testing.T, what string, cond func(bridge.Status) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond(r.b.Status()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %+v", what, r.b.Status())
		}
		time.Sleep(5 * time.Millisecond) // polling the status
	}
}

// TestWhatTheModelSeesOfEachQQUpdateKind pushes each kind of update the
// way NapCat sends it through the real path (the reverse WebSocket, the
// adapter, the bridge) and checks the line the model's prompt gets: who
// says it and what, or the platform line a service message becomes.
func TestWhatTheModelSeesOfEachQQUpdateKind(t *testing.T) {
	r := newBridgeRig(t, nil)
	alice := onebottest.Sender{UserID: 1, Nickname: "alice-nick", Card: "Alice"}
	if _, err := r.impl.Group(555, alice, onebottest.Text("hello all")); err != nil {
		t.Fatal(err)
	}
	r.agent.until(t, "alice's first line", func() bool { return len(r.agent.stored) == 1 })
	r.impl.SetForward("fw-77", onebottest.ForwardMsg{UserID: 5, Nickname: "Dora", Segs: []any{onebottest.Text("from the archive")}})
	ark := `{"app":"com.tencent.miniapp_01","prompt":"[QQ小程序]哔哩哔哩","meta":{"detail_1":{"appid":"1109937557","title":"哔哩哔哩","desc":"猫猫打架","preview":"pubminishare-30161.picsz.qpic.cn/x","qqdocurl":"https://b23.tv/abc123"}}}`
	for _, tc := range []struct {
		name string
		push func() error
		user string // "" : a platform line, not anyone's message
		want []string
	}{
		{"mini-app card", func() error { _, err := r.impl.GroupSegs(555, alice, onebottest.JSONCard(ark)); return err },
			"Alice", []string{"[card: 哔哩哔哩 — 猫猫打架 https://b23.tv/abc123]"}},
		{"news card", func() error {
			_, err := r.impl.GroupSegs(555, alice, onebottest.JSONCard(`{"app":"com.tencent.structmsg","prompt":"[分享]标题","meta":{"news":{"title":"Go 1.26 released","desc":"What's new","jumpUrl":"https://go.dev/blog/go1.26","tag":"Go"}}}`))
			return err
		}, "Alice", []string{"[card: Go 1.26 released — What's new https://go.dev/blog/go1.26]"}},
		{"markdown", func() error { _, err := r.impl.GroupSegs(555, alice, onebottest.Markdown("**bold** plan")); return err },
			"Alice", []string{"**bold** plan"}},
		{"file", func() error {
			_, err := r.impl.GroupSegs(555, alice, onebottest.File("report.pdf", "/abc-uuid", 1258291))
			return err
		}, "Alice", []string{"[file report.pdf (1.2 MB)]"}},
		{"online file", func() error {
			_, err := r.impl.GroupSegs(555, alice, onebottest.OnlineFile("movie.mkv", 734003200, false))
			return err
		}, "Alice", []string{"[online file movie.mkv (700.0 MB)]"}},
		{"forward with its content", func() error {
			_, err := r.impl.GroupSegs(555, alice, onebottest.Forward("7400001",
				onebottest.ForwardMsg{UserID: 2, Nickname: "Bob", Segs: []any{onebottest.Text("first")}},
				onebottest.ForwardMsg{UserID: 3, Nickname: "Carol", Segs: []any{onebottest.Text("second"), onebottest.Face("178")}}))
			return err
		}, "Alice", []string{"[forwarded messages:", "Bob: first", "Carol: second[face 178]"}},
		{"forward by id only", func() error { _, err := r.impl.GroupSegs(555, alice, onebottest.Forward("fw-77")); return err },
			"Alice", []string{"[forwarded messages:", "Dora: from the archive"}},
		{"a forward that cannot be read", func() error { _, err := r.impl.GroupSegs(555, alice, onebottest.Forward("gone")); return err },
			"Alice", []string{"[forwarded messages, not readable]"}},
		{"join", func() error { return r.impl.GroupIncrease(555, 4, 1, "invite") },
			"", []string{"qq:group:555: @4 joined the group, invited by @Alice"}},
		{"leave", func() error { return r.impl.GroupDecrease(555, 1, 1, "leave") },
			"", []string{"qq:group:555: @Alice left the group"}},
		{"kick", func() error { return r.impl.GroupDecrease(555, 4, 1, "kick") },
			"", []string{"qq:group:555: @4 was removed from the group by @Alice"}},
		{"rename", func() error { return r.impl.GroupName(555, 1, "cats only") },
			"", []string{"qq:group:555: @Alice renamed the group to «cats only»"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.agent.mu.Lock()
			stored, notes := len(r.agent.stored), len(r.agent.notes)
			r.agent.mu.Unlock()
			if err := tc.push(); err != nil {
				t.Fatal(err)
			}
			var got, user string
			r.agent.until(t, tc.name, func() bool {
				switch {
				case len(r.agent.stored) > stored:
					got, user = r.agent.stored[stored].Text, r.agent.stored[stored].User
					return true
				case len(r.agent.notes) > notes:
					got, user = r.agent.notes[notes], ""
					return true
				}
				return false
			})
			if user != tc.user {
				t.Errorf("said by %q, want %q (text %q)", user, tc.user, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the model sees %q; want it to contain %q", got, w)
				}
			}
			if strings.Contains(got, "empty message") {
				t.Errorf("the model sees %q", got)
			}
		})
	}
}

// TestAnAdminsRecallOfTheBotsMessageIsApplied: NapCat's group_recall for
// a message the bot sent, with an admin as operator_id, marks the agent's
// stored reply recalled and tells the model who withdrew it.
func TestAnAdminsRecallOfTheBotsMessageIsApplied(t *testing.T) {
	r := newBridgeRig(t, nil)
	if _, err := r.impl.Group(555, onebottest.Sender{UserID: 8, Card: "Admin"}, onebottest.Text("hi")); err != nil {
		t.Fatal(err)
	}
	r.agent.until(t, "the admin's line", func() bool { return len(r.agent.stored) == 1 })
	err := r.b.Deliver(context.Background(), router.Delivery{Packet: router.Packet{Key: "0193a000-0000-7000-8000-000000000001",
		Channel: "qq:group:555", Kind: router.KindReply, Text: "the weather is fine"}, Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	sends, _ := r.impl.WaitCalls(context.Background(), 1, "send_group_msg")
	if len(sends) != 1 {
		t.Fatalf("sends = %v", sends)
	}
	// the fake numbers events and sent messages alike from 1001: the
	// admin's line was 1001, the bot's answer 1002
	const id = 1002
	if err := r.impl.GroupRecall(555, 10001, 8, id); err != nil {
		t.Fatal(err)
	}
	r.agent.until(t, "the recall applied and noted", func() bool { return len(r.agent.recalled) == 1 && len(r.agent.notes) == 1 })
	r.agent.mu.Lock()
	defer r.agent.mu.Unlock()
	if r.agent.recalled[0] != "qq:group:555 0193a000-0000-7000-8000-000000000001" {
		t.Errorf("recalled %q, want the stored reply", r.agent.recalled)
	}
	if n := r.agent.notes[0]; !strings.Contains(n, "Admin withdrew (recalled) your message «the weather is fine»") {
		t.Errorf("note = %q", n)
	}
}

// TestAnOfflineAccountIsShownOfflineWithinOneHeartbeat: NapCat keeps the
// WebSocket up when QQ kicks the account; its next heartbeat says
// status.online false. The bridge reads offline at that heartbeat (not
// connected, its state says why), the owner is alerted, and a heartbeat
// that says online brings it back; a bot_offline notice does the same at
// once.
func TestAnOfflineAccountIsShownOfflineWithinOneHeartbeat(t *testing.T) {
	var mu sync.Mutex
	var alerts []string
	r := newBridgeRig(t, func(o *bridge.Options) {
		o.Alert = func(text string) {
			mu.Lock()
			alerts = append(alerts, text)
			mu.Unlock()
		}
	})
	if err := r.impl.Heartbeat(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	r.impl.SetOffline(true)
	if err := r.impl.Heartbeat(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, "offline after one heartbeat", func(s bridge.Status) bool {
		return s.Offline && !s.Connected && strings.Contains(s.State, "offline: the heartbeat says the account is offline")
	})
	if !r.impl.Connected() {
		t.Fatal("the connection was closed; it should stay up (the account, not the link, is gone)")
	}
	r.impl.SetOffline(false)
	if err := r.impl.Heartbeat(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, "online again", func(s bridge.Status) bool { return s.Connected && !s.Offline && s.State == "" })

	if err := r.impl.BotOffline("下线通知", "你的账号在另一台设备登录"); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, "offline at bot_offline", func(s bridge.Status) bool {
		return s.Offline && strings.Contains(s.State, "kicked offline: 下线通知: 你的账号在另一台设备登录")
	})
	// NapCat's heartbeats say offline until the account logs in again
	for _, off := range []bool{true, false} {
		r.impl.SetOffline(off)
		if err := r.impl.Heartbeat(30 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	r.waitStatus(t, "online again after bot_offline", func(s bridge.Status) bool { return s.Connected && !s.Offline })
	mu.Lock()
	defer mu.Unlock()
	if len(alerts) != 2 || !strings.Contains(alerts[0], "the account 10001 is offline") {
		t.Errorf("alerts = %q, want one per time the account went offline", alerts)
	}
}

// TestLagrangesBotOfflineHoldsUntilTheNextConnection: Lagrange.OneBot's
// heartbeats say online whatever the account does, so after its
// bot_offline the bridge stays offline through them, until the
// implementation connects anew (after the account logs in again).
func TestLagrangesBotOfflineHoldsUntilTheNextConnection(t *testing.T) {
	r := newBridgeRig(t, nil, func(i *onebottest.Impl) { i.Lagrange, i.HeartInterval = true, -1 })
	if err := r.impl.BotOffline("BotOfflineEvent", "账号被冻结"); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, "offline", func(s bridge.Status) bool {
		return s.Offline && strings.HasSuffix(s.State, "kicked offline: 账号被冻结")
	})
	for range 3 {
		if err := r.impl.Heartbeat(5 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// a message after the heartbeats: once it is stored they were read
	if _, err := r.impl.Group(555, onebottest.Sender{UserID: 1, Card: "Alice"}, onebottest.Text("anyone?")); err != nil {
		t.Fatal(err)
	}
	r.agent.until(t, "the line after the heartbeats", func() bool { return len(r.agent.stored) == 1 })
	if st := r.b.Status(); !st.Offline || st.Connected {
		t.Fatalf("Lagrange's constant online heartbeats brought the account back: %+v", st)
	}
	r.impl.SetOffline(false)
	r.impl.Disconnect()
	if err := r.impl.Connect(context.Background(), r.url); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, "online on the new connection", func(s bridge.Status) bool { return s.Connected && !s.Offline })
}

// TestTwoAccountsOnOneReverseBridgeDoNotFlap: a second QQ account
// connecting to a bridge that serves another is refused with a clear
// error (HTTP 409) however often it retries, and the first connection
// stays up; two bridges on the same path, each with its self_id, serve
// one account each.
func TestTwoAccountsOnOneReverseBridgeDoNotFlap(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		r := newBridgeRig(t, nil)
		other := &onebottest.Impl{SelfID: 20002, Token: "tok"}
		url := r.url
		for range 8 { // NapCat retries every reconnectInterval
			err := other.Connect(context.Background(), url)
			var ref *onebottest.RefusedError
			if !errors.As(err, &ref) || ref.Status != http.StatusConflict {
				t.Fatalf("second account: %v, want a 409 refusal", err)
			}
		}
		if !r.impl.Connected() {
			t.Fatal("the first account's connection was knocked off")
		}
		st := r.b.Status()
		if !st.Connected || st.Self != "10001" || !strings.Contains(st.LastError, "account 20002 was refused: give it a bridge of its own") {
			t.Errorf("status = %+v", st)
		}
	})
	t.Run("both served by self_id", func(t *testing.T) {
		mk := func(name, self string) *Adapter {
			a, err := New(Options{Name: name, Mode: "reverse", AccessToken: "tok", SelfID: self, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		a1, a2 := mk("qq1", "10001"), mk("qq2", "20002")
		srv := httptest.NewServer(NewReverseMux(nil, map[string]*Adapter{"qq1": a1, "qq2": a2}))
		t.Cleanup(srv.Close)
		s1, s2 := newSink(), newSink()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, x := range []struct {
			a *Adapter
			s *sink
		}{{a1, s1}, {a2, s2}} {
			wg.Add(1)
			go func() { defer wg.Done(); x.a.Run(ctx, x.s) }()
		}
		t.Cleanup(func() { cancel(); wg.Wait() })
		url := "ws" + strings.TrimPrefix(srv.URL, "http") + ReversePath
		i1, i2 := &onebottest.Impl{SelfID: 10001, Token: "tok"}, &onebottest.Impl{SelfID: 20002, Token: "tok"}
		for _, i := range []*onebottest.Impl{i1, i2} {
			if err := i.Connect(context.Background(), url); err != nil {
				t.Fatal(err)
			}
		}
		s1.until(t, "qq1 serves 10001", func() bool { return len(s1.self) > 0 && s1.self[0].ID == "10001" })
		s2.until(t, "qq2 serves 20002", func() bool { return len(s2.self) > 0 && s2.self[0].ID == "20002" })
		if !i1.Connected() || !i2.Connected() {
			t.Fatal("an account was knocked off")
		}
	})
}

// TestQQChatCommands: in a QQ group "/help" (bare, or after an @mention
// of the bot) and "/reset" are answered at once as replies, kept out of
// the conversation, and the next person's turn holds none of them; the
// owner's /pause stops the chime-in there, /resume allows it again.
func TestQQChatCommands(t *testing.T) {
	r := newBridgeRig(t, func(o *bridge.Options) {
		o.Manners.ChimeIn = 1
		o.Rand = func() float64 { return 0 } // every unaddressed line chimes in, unless paused
	})
	r.agent.mu.Lock()
	r.agent.owners["qq:9"] = true
	r.agent.mu.Unlock()
	alice := onebottest.Sender{UserID: 1, Card: "Alice"}
	owner := onebottest.Sender{UserID: 9, Card: "Hareru"}
	answers := 0
	say := func(s onebottest.Sender, want string, segs ...onebottest.Seg) {
		t.Helper()
		id, err := r.impl.Group(555, s, segs...)
		if err != nil {
			t.Fatal(err)
		}
		answers++
		calls, err := r.impl.WaitCalls(context.Background(), answers, "send_group_msg")
		if err != nil {
			t.Fatal(err)
		}
		got := calls[answers-1].Text()
		if !strings.Contains(got, want) || !strings.HasPrefix(got, fmt.Sprintf("<reply %d>", id)) {
			t.Errorf("answer to %v = %q, want a reply to %d with %q", segs, got, id, want)
		}
	}
	say(alice, "I answer when you @mention me", onebottest.Text("/help"))
	say(alice, "/pause", onebottest.At("10001"), onebottest.Text(" /help"))
	say(alice, "New topic", onebottest.Text("/reset please"))
	say(alice, "Only my owner can /pause me here", onebottest.Text("/pause"))
	say(owner, "Paused", onebottest.Text("/pause"))
	if _, err := r.impl.Group(555, alice, onebottest.Text("nice weather")); err != nil {
		t.Fatal(err)
	}
	r.agent.until(t, "the plain line stored", func() bool { return len(r.agent.stored) == 1 })
	say(owner, "Resumed", onebottest.Text("/resume"))
	if _, err := r.impl.Group(555, alice, onebottest.Text("/roll a die")); err != nil {
		t.Fatal(err)
	}
	r.agent.until(t, "an unknown command kept as text, and a chime-in", func() bool { return len(r.agent.stored) == 2 && len(r.agent.turns) == 1 })
	r.agent.mu.Lock()
	defer r.agent.mu.Unlock()
	if r.agent.stored[0].Text != "nice weather" || r.agent.stored[1].Text != "/roll a die" {
		t.Errorf("stored %+v; the commands are not the conversation's", r.agent.stored)
	}
	if len(r.agent.turns) != 1 || r.agent.turns[0].MessageID != "m2" {
		t.Errorf("turns %+v; want only the chime-in after /resume (none while paused)", r.agent.turns)
	}
	if len(r.agent.resets) != 1 || r.agent.resets[0] != "qq:group:555 by Alice" {
		t.Errorf("resets = %q", r.agent.resets)
	}
}
