package onebot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/bridgetest"
	"github.com/cyan-agent/cyan/internal/onebottest"
	"github.com/cyan-agent/cyan/store"
)

// Time in these tests runs 50 times fast: NapCat's and LLOneBot's own
// send timeout (10 s) is kernel, QQ's late confirmation (6 s) is late, the
// adapter's call timeout (15 s by default) is callTimeout and the 5 s cyan
// used to wait is oldWait. The fake runs on the real clock over a real
// WebSocket, so the waits are real, and short.
const (
	scale       = 50
	kernel      = 10 * time.Second / scale
	late        = 6 * time.Second / scale
	callTimeout = 15 * time.Second / scale
	oldWait     = 5 * time.Second / scale
)

// e2e is a bridge over a reverse-mode adapter, connected to impl; its
// sends time out after the timeout newE2E is given.
type e2e struct {
	b     *bridge.Bridge
	agent *bridgetest.Agent
	out   *bridgetest.Outbox
	impl  *onebottest.Impl
}

func newE2E(t *testing.T, impl *onebottest.Impl, timeout time.Duration, quote bool) *e2e {
	t.Helper()
	// the send's timeout is scaled like the implementation's; the other
	// calls (the history lookups, the mute's query) keep a bound no load
	// of the test machine reaches
	a, url := reverseAdapter(t, 10*time.Second)
	a.sendTimeout = timeout
	r := runE2E(t, a, impl, quote)
	impl.SelfID, impl.HeartInterval = 10001, -1
	if err := impl.Connect(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "connected", func() bool { return r.b.Status().Connected && r.b.Status().Self == "10001" })
	return r
}

// runE2E runs a bridge over a, until the test ends, once a runs. tweak,
// when given, changes the bridge's options and the outbox before they run.
func runE2E(t *testing.T, a *Adapter, impl *onebottest.Impl, quote bool, tweak ...func(*bridge.Options, *bridgetest.Outbox)) *e2e {
	t.Helper()
	out := bridgetest.NewOutbox()
	out.Retry = func(int) time.Duration { return 20 * time.Millisecond }
	agent := &bridgetest.Agent{Out: out, Quote: quote, Owners: map[string]bool{"qq:9": true}}
	m := config.DefaultManners()
	m.Debounce, m.MaxWait, m.ReplyDelay, m.CharDelay, m.TypingEvery = config.Duration(20*time.Millisecond), 0, 0, 0, 0
	o := bridge.Options{Name: "qq", Adapter: a, Agent: agent, Attach: out.Attach, Queue: out.Pending, Manners: m,
		AgentName: func() string { return "cyan" }}
	for _, f := range tweak {
		f(&o, out)
	}
	b, err := bridge.New(o)
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
	waitFor(t, "the adapter to run", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.ctx != nil
	})
	return &e2e{b: b, agent: agent, out: out, impl: impl}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var alice = onebottest.Sender{UserID: 1, Nickname: "alice"}

func flavours() map[string]func() *onebottest.Impl {
	return map[string]func() *onebottest.Impl{
		"napcat":   func() *onebottest.Impl { return &onebottest.Impl{} },
		"llonebot": func() *onebottest.Impl { return &onebottest.Impl{LLOneBot: true} },
		"lagrange": func() *onebottest.Impl { return &onebottest.Impl{Lagrange: true} },
	}
}

// A send QQ confirms after 6 s is posted once, on each implementation,
// and reported delivered: whether cyan waits long enough (its default
// call timeout, past the implementation's own), gives up first (the 5 s
// it used to wait: it finds the message in the chat's history), or the
// implementation's own wait runs out first (NapCat's and LLOneBot's
// "Timeout: NTEvent …" / "invoke timeout …": found the same way).
func TestASendConfirmedLateIsPostedOnce(t *testing.T) {
	for name, mk := range flavours() {
		for _, tc := range []struct {
			name             string
			timeout, confirm time.Duration
		}{
			{"waits", callTimeout, late},
			{"cyan-gives-up-first", oldWait, late},
			{"implementation-times-out", callTimeout, kernel + late},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				impl := mk()
				impl.ConfirmDelay, impl.KernelTimeout = tc.confirm, kernel
				r := newE2E(t, impl, tc.timeout, false)
				if _, err := impl.Group(42, alice, onebottest.At("10001"), onebottest.Text(" what time is it?")); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the answer acknowledged", func() bool { return r.b.Status().Sent == 1 && r.out.Pending() == 0 })
				time.Sleep(callTimeout) // anything more would come by now
				if got := impl.Posted("group", 42); len(got) != 1 || !strings.Contains(got[0], "what time is it?") {
					t.Errorf("posted %q, want the answer once", got)
				}
				if n := len(impl.Calls("send_group_msg")); n != 1 {
					t.Errorf("%d sends, want 1", n)
				}
				if looked := len(impl.Calls("get_group_msg_history")) > 0; looked != (tc.name != "waits") {
					t.Errorf("looked in the history: %v", looked)
				}
				st := r.b.Status()
				if st.Failed != 0 || st.Unknown != 0 || len(st.Undelivered) != 0 || len(r.agent.Notes()) != 0 {
					t.Errorf("status %+v, notes %q: the answer was delivered", st, r.agent.Notes())
				}
			})
		}
	}
}

// A send that timed out and is not in the chat's history was never
// posted: it is sent again, and posted once.
func TestASendNotInTheHistoryIsSentAgain(t *testing.T) {
	impl := &onebottest.Impl{}
	r := newE2E(t, impl, callTimeout, false)
	impl.FailNext("send_group_msg", onebottest.Failure{Retcode: 1200, Wording: "Timeout: NTEvent serviceAndMethod:NodeIKernelMsgService/sendMsg ListenerName:NodeIKernelMsgListener/onMsgInfoListUpdate EventRet:\n{}\n"})
	if _, err := impl.Group(42, alice, onebottest.At("10001"), onebottest.Text(" hi")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the answer", func() bool { return r.b.Status().Sent == 1 })
	if got := impl.Posted("group", 42); len(got) != 1 {
		t.Errorf("posted %q, want once", got)
	}
	if n := len(impl.Calls("get_group_msg_history")); n != 1 {
		t.Errorf("%d history lookups, want 1", n)
	}
	if n := len(impl.Calls("send_group_msg")); n != 2 {
		t.Errorf("%d sends, want 2 (the first never posted)", n)
	}
}

// A group where the bot is muted holds its own answers only: the owner's
// private message is answered while the mute lasts, nothing is sent into
// the muted group (at most one send, when the mute's notice was missed),
// and the held answer goes once the mute is lifted.
func TestAMutedGroupHoldsOnlyItsOwnAnswers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		notice   bool
		maxSends int
	}{{"notice", true, 0}, {"notice-missed", false, 1}} {
		for name, mk := range flavours() {
			if name == "lagrange" && !tc.notice {
				continue // Lagrange refuses a muted send at once, without a timeout or shut_up_timestamp
			}
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				impl := mk()
				impl.KernelTimeout = kernel
				r := newE2E(t, impl, callTimeout, false)
				if err := impl.Mute(42, 7, time.Hour, tc.notice); err != nil {
					t.Fatal(err)
				}
				if tc.notice {
					waitFor(t, "the mute", func() bool { return r.b.Status().Muted == 1 })
				}
				if _, err := impl.Group(42, alice, onebottest.At("10001"), onebottest.Text(" are you there?")); err != nil {
					t.Fatal(err)
				}
				if !tc.notice {
					waitFor(t, "the refused send", func() bool { return r.b.Status().Muted == 1 })
				}
				if _, err := impl.Private(onebottest.Sender{UserID: 9, Nickname: "owner"}, onebottest.Text("ping")); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the owner's answer", func() bool { return len(impl.Posted("private", 9)) == 1 })
				if got := impl.Posted("group", 42); len(got) != 0 {
					t.Errorf("posted into the muted group: %q", got)
				}
				if n := len(impl.Calls("send_group_msg")); n > tc.maxSends {
					t.Errorf("%d sends into the muted group, want at most %d", n, tc.maxSends)
				}
				if err := impl.Unmute(42, 7); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the held answer", func() bool { return len(impl.Posted("group", 42)) == 1 })
				time.Sleep(callTimeout)
				if got := impl.Posted("group", 42); len(got) != 1 {
					t.Errorf("posted %q after the lift, want the held answer once", got)
				}
				if st := r.b.Status(); st.Failed != 0 || st.Unknown != 0 || st.Muted != 0 {
					t.Errorf("status %+v", st)
				}
			})
		}
	}
}

// A poke is answered on Lagrange: the answer never replies to the poke's
// made-up id; and a reply Lagrange refuses (retcode 200: it never stored
// the message) is sent again without the reply.
func TestAPokeIsAnsweredOnLagrange(t *testing.T) {
	impl := &onebottest.Impl{Lagrange: true}
	r := newE2E(t, impl, callTimeout, true)
	if err := impl.GroupPoke(42, 1, 10001); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the poke's answer", func() bool { return len(impl.Posted("group", 42)) == 1 })
	for _, c := range impl.Calls("send_group_msg") {
		if strings.Contains(c.Text(), "<reply") {
			t.Errorf("sent %q: a reply to the poke's made-up id", c.Text())
		}
	}
	// a reply to a message Lagrange does not know (it was said before
	// Lagrange.OneBot started keeping its records)
	if err := impl.GroupWithID(5550001, 43, alice, onebottest.At("10001"), onebottest.Text(" and this?")); err != nil {
		t.Fatal(err)
	}
	impl.Forget(5550001)
	waitFor(t, "the answer without the reply", func() bool { return len(impl.Posted("group", 43)) == 1 })
	calls := impl.Calls("send_group_msg")
	last := calls[len(calls)-1]
	if strings.Contains(last.Text(), "<reply") || len(calls) != 3 || !strings.Contains(calls[1].Text(), "<reply 5550001>") {
		t.Errorf("sends %v: want the refused reply, then the answer without it", texts(calls))
	}
	waitFor(t, "both sent", func() bool { return r.b.Status().Sent == 2 })
	if st := r.b.Status(); st.Failed != 0 {
		t.Errorf("status %+v", st)
	}
}

func texts(calls []onebottest.Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, fmt.Sprintf("%q", c.Text()))
	}
	return out
}

// In a busy group the unconfirmed send is found pages back: more messages
// came after it than one history answer holds.
func TestAnUnconfirmedSendIsFoundInABusyGroup(t *testing.T) {
	impl := &onebottest.Impl{ConfirmDelay: kernel + late, KernelTimeout: kernel}
	r := newE2E(t, impl, callTimeout, false)
	if _, err := impl.Group(42, alice, onebottest.At("10001"), onebottest.Text(" busy?")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the send", func() bool { return len(impl.Calls("send_group_msg")) == 1 })
	for i := range historyCount * 3 / 2 {
		if _, err := impl.Group(42, onebottest.Sender{UserID: int64(200 + i), Nickname: "m"}, onebottest.Text("chatter")); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the answer acknowledged", func() bool { return r.b.Status().Sent == 1 && r.out.Pending() == 0 })
	time.Sleep(callTimeout)
	if got := impl.Posted("group", 42); len(got) != 1 {
		t.Errorf("posted %q, want once", got)
	}
	if n := len(impl.Calls("get_group_msg_history")); n < 2 {
		t.Errorf("%d history pages read, want the second too", n)
	}
	if st := r.b.Status(); st.Unknown != 0 || st.Failed != 0 {
		t.Errorf("status %+v", st)
	}
}

// A send whose connection dropped after its request was written waits
// for the next connection to look for it in the chat only while Run
// runs: in forward mode Run ends with the connection, and the bridge
// dials again only once this send, its outbox's, is done — waiting would
// hold the reconnection up for the whole call timeout. Its outcome stays
// unknown (not sent again), at once.
func TestAnUnconfirmedSendDoesNotWaitForAConnectionThatCannotCome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, err := New(Options{Name: "qq", Mode: "forward", URL: "ws://127.0.0.1:1", Logger: slog.New(slog.DiscardHandler), Timeout: 15 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		_, err = a.unconfirmed(context.Background(), bridge.Chat{Kind: bridge.Group, ID: "42"}, nil, began, "send_group_msg: connection lost")
		var se *bridge.SendError
		if !errors.As(err, &se) || !se.Unknown {
			t.Fatalf("err %v, want an unknown outcome", err)
		}
		if waited := time.Since(began); waited > time.Second {
			t.Errorf("waited %s for a connection while Run was not running", waited)
		}
	})
}

// In forward mode, a send whose connection drops after its request was
// written is looked up over a connection dialed at once, within the same
// Run: posted before the drop, it is found in the chat and delivered,
// once; lost with the drop, it is not there and is sent again, and posted
// once. Before, Run ended with the connection, the next dial waited for
// the send, and the send settled "outcome unknown" at once: never sent
// again, even when it was never posted.
func TestAForwardSendCaughtByADropIsLookedUpAtOnce(t *testing.T) {
	for _, posted := range []bool{true, false} {
		t.Run(fmt.Sprintf("posted=%v", posted), func(t *testing.T) {
			impl := &onebottest.Impl{SelfID: 10001, HeartInterval: -1}
			srv := httptest.NewServer(impl)
			t.Cleanup(srv.Close)
			a, err := New(Options{Name: "qq", Mode: "forward", URL: forwardURL(srv), Logger: slog.New(slog.DiscardHandler), Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			// no supervisor: a Run that ends is not started again
			r := runE2E(t, a, impl, false)
			waitFor(t, "connected", func() bool { return r.b.Status().Connected && r.b.Status().Self == "10001" })
			impl.DropNext("send_group_msg", posted)
			if _, err := impl.Group(42, alice, onebottest.At("10001"), onebottest.Text(" still there?")); err != nil {
				t.Fatal(err)
			}
			deliveredOnce(t, r, impl, posted)
			if n := impl.Dials(); n != 2 {
				t.Errorf("%d connections, want 2: the one dropped and the one dialed for the lookup", n)
			}
			if !r.b.Status().Connected {
				t.Error("the bridge is not connected")
			}
		})
	}
}

// deliveredOnce waits for the answer to " still there?" and checks that
// it was posted once — sent once more when the drop lost it (posted
// false) — after one history lookup, and is settled delivered.
func deliveredOnce(t *testing.T, r *e2e, impl *onebottest.Impl, posted bool) {
	t.Helper()
	waitFor(t, "the answer delivered", func() bool { return r.b.Status().Sent == 1 && r.out.Pending() == 0 })
	if got := impl.Posted("group", 42); len(got) != 1 || !strings.Contains(got[0], "still there?") {
		t.Errorf("posted %q, want the answer once", got)
	}
	sends := 1
	if !posted {
		sends = 2
	}
	if n := len(impl.Calls("send_group_msg")); n != sends {
		t.Errorf("%d sends, want %d", n, sends)
	}
	if n := len(impl.Calls("get_group_msg_history")); n != 1 {
		t.Errorf("%d history lookups, want 1", n)
	}
	st := r.b.Status()
	if st.Unknown != 0 || st.Failed != 0 || len(st.Undelivered) != 0 || len(r.agent.Notes()) != 0 {
		t.Errorf("status %+v, notes %q: the answer was delivered", st, r.agent.Notes())
	}
}

// reverseAdapter is an adapter in reverse mode with the given call
// timeout, served until the test ends; url is where an implementation
// dials it.
func reverseAdapter(t *testing.T, timeout time.Duration) (a *Adapter, url string) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	a, err := New(Options{Name: "qq", Mode: "reverse", Logger: log, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(ReversePath, NewReverseMux(log, map[string]*Adapter{"qq": a}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return a, "ws" + strings.TrimPrefix(srv.URL, "http") + ReversePath
}

// A reverse-mode send caught by a drop after which the implementation
// does not dial back within the call timeout (NapCat restarting, which
// takes QQ's login) is not settled as unknown: its flight stays in the
// sent log, and the packet's next offer waits for the connection and
// looks for it in the chat — posted, delivered once; lost, sent once.
func TestAReverseSendCaughtByALongDropIsLookedUpWhenTheImplementationIsBack(t *testing.T) {
	for _, posted := range []bool{true, false} {
		t.Run(fmt.Sprintf("posted=%v", posted), func(t *testing.T) {
			t.Parallel()
			a, url := reverseAdapter(t, 2*time.Second)
			db, err := store.Open(store.Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			sent, err := bridge.NewStoreSent(db, "qq")
			if err != nil {
				t.Fatal(err)
			}
			retried := make(chan int, 8)
			impl := &onebottest.Impl{SelfID: 10001, HeartInterval: -1}
			r := runE2E(t, a, impl, false, func(o *bridge.Options, out *bridgetest.Outbox) {
				o.Sent = sent
				out.Retry = func(n int) time.Duration { retried <- n; return 20 * time.Millisecond }
			})
			if err := impl.Connect(context.Background(), url); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "connected", func() bool { return r.b.Status().Connected && r.b.Status().Self == "10001" })
			impl.DropNext("send_group_msg", posted)
			if _, err := impl.Group(42, alice, onebottest.At("10001"), onebottest.Text(" still there?")); err != nil {
				t.Fatal(err)
			}
			select {
			case <-retried: // the adapter waited its timeout in vain; the packet is offered again
			case <-time.After(20 * time.Second):
				t.Fatalf("the send was never offered again; status %+v", r.b.Status())
			}
			if st := r.b.Status(); st.Unknown != 0 || st.Sent != 0 {
				t.Fatalf("status %+v before the implementation is back: want nothing settled", st)
			}
			if err := impl.Connect(context.Background(), url); err != nil {
				t.Fatal(err)
			}
			deliveredOnce(t, r, impl, posted)
		})
	}
}

// Missed reads a chat's history back to the bridge's newest kept message
// and returns what was said after it, oldest first, as bridge messages
// (the bot's own included: the bridge skips them); an implementation
// without the history action is ErrUnsupported, so the bridge stops
// asking.
func TestMissedReadsTheHistoryAfterTheMark(t *testing.T) {
	for name, mk := range flavours() {
		t.Run(name, func(t *testing.T) { testMissed(t, mk()) })
	}
}

// testMissed is TestMissedReadsTheHistoryAfterTheMark on one
// implementation, with a history longer than a page.
func testMissed(t *testing.T, impl *onebottest.Impl) {
	a, url := reverseAdapter(t, 10*time.Second)
	impl.SelfID, impl.HeartInterval = 10001, -1
	r := runE2E(t, a, impl, false)
	if err := impl.Connect(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "connected", func() bool { return r.b.Status().Connected && r.b.Status().Self == "10001" })
	impl.Disconnect() // what follows is said while cyan is away
	var ids []int64
	var said []string
	for i := range 150 { // more than a page of history
		s := fmt.Sprint("line ", i)
		id, err := impl.Group(42, alice, onebottest.Text(s))
		if !errors.Is(err, onebottest.ErrNotConnected) {
			t.Fatalf("said while away: %v", err)
		}
		ids, said = append(ids, id), append(said, fmt.Sprint(id)+":"+s)
	}
	if err := impl.Connect(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "connected again", func() bool { return r.b.Status().Connected })
	chat := bridge.Chat{Kind: bridge.Group, ID: "42"}
	got, err := a.Missed(context.Background(), chat, fmt.Sprint(ids[1]), time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range got {
		if m.Chat != chat || m.From.ID != "1" || m.Time.IsZero() {
			t.Errorf("a missed message %+v", m)
		}
		texts = append(texts, m.ID+":"+m.Text())
	}
	if want := said[2:]; fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Errorf("missed %d messages, want the %d after the mark, in order:\n%q", len(texts), len(want), texts)
	}
	impl.FailNext("get_group_msg_history", onebottest.Failure{Retcode: 1404, Wording: "不支持的api"})
	if _, err := a.Missed(context.Background(), chat, "1", time.Now()); !errors.Is(err, bridge.ErrUnsupported) {
		t.Errorf("an implementation without the action: %v, want ErrUnsupported", err)
	}
}
