package bridgetest_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/bridge/onebot"
	"github.com/cyan-agent/cyan/bridge/telegram"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/bridgetest"
	"github.com/cyan-agent/cyan/internal/onebottest"
	"github.com/cyan-agent/cyan/internal/tgtest"
)

// scale is how much faster than life the chaos runs: a simulated second
// is 50 ms. Every wait of the platforms and of the bridges is scaled
// alike (NapCat's 10 s send timeout is 500 ms, a mute of 45 s 2.25 s).
const scale = 20

func sim(d time.Duration) time.Duration { return d / scale }

// BenchmarkBridgesChaos runs a busy QQ group (NapCat over a reverse
// WebSocket: about two messages a second, one in ten addressing the bot,
// and the owner writing privately every half minute) and a Telegram group
// (one message a second, one in eight addressing the bot) for 10
// simulated minutes (BRIDGE_CHAOS_MINUTES to change) at 20 times the
// speed of life, against the fakes of the platforms, through the bridges
// with laned outboxes, while the platforms misbehave:
//
//   - slow acks: QQ confirms a send after 0–8 s, and one in six after 9–14 s,
//     past NapCat's own 10 s; the Bot API answers after 0–8 s, and one in
//     twenty after 55 s, past cyan's send timeout;
//   - mutes: the bot is muted in the QQ group at minutes 2 (notice) and 6
//     (the notice lost), for 45 s each, then the mute is lifted;
//   - restarts: the QQ bridge restarts at minute 4 and the Telegram
//     bridge at minute 7 (the daemon's restart: durable logs kept, sends in
//     flight finished);
//   - reconnects: NapCat drops and reconnects at minutes 3 and 8;
//   - a move: the Telegram group is upgraded to a supergroup at minute 5.
//
// It reports the answers owed (turns that produced an answer), answered
// once, twice (the target is 0) and lost (the target is 0; each one is
// listed with why), the outcomes left unknown, and the owner's longest wait
// for an answer in simulated seconds.
//
//	go test ./internal/bridgetest -run XXX -bench BridgesChaos -benchtime 1x
func BenchmarkBridgesChaos(b *testing.B) {
	minutes := 10
	if m, err := strconv.Atoi(os.Getenv("BRIDGE_CHAOS_MINUTES")); err == nil && m > 0 {
		minutes = m
	}
	for range b.N {
		r := runChaos(b, minutes)
		b.ReportMetric(float64(r.owed), "owed")
		b.ReportMetric(float64(r.once), "once")
		b.ReportMetric(float64(r.twice), "twice")
		b.ReportMetric(float64(r.lost), "lost")
		b.ReportMetric(float64(r.unknown), "unknown")
		b.ReportMetric(r.ownerMax.Seconds()*scale, "owner-max-s")
		b.ReportMetric(r.ownerMutedMax.Seconds()*scale, "owner-muted-max-s")
		b.Logf("\n%s", r.table())
		if r.twice != 0 {
			b.Errorf("%d answers posted twice or more", r.twice)
		}
		if r.lost != len(r.lostWhy) {
			b.Errorf("%d answers lost, %d with a reason", r.lost, len(r.lostWhy))
		}
	}
}

type chaosResult struct {
	owed, once, twice, lost, unknown int
	questions                        int
	perPlatform                      map[string][4]int // owed, once, twice, lost
	lostWhy, twiceWhat, mutedSends   []string
	ownerMutedMax, ownerP50          time.Duration
	ownerMax                         time.Duration
	sendsMuted                       int
}

func (r chaosResult) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| bridge | answers owed | answered once | answered twice | lost |\n|---|---|---|---|---|\n")
	names := make([]string, 0, len(r.perPlatform))
	for n := range r.perPlatform {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := r.perPlatform[n]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", n, c[0], c[1], c[2], c[3])
	}
	fmt.Fprintf(&b, "| all | %d | %d | %d | %d |\n", r.owed, r.once, r.twice, r.lost)
	fmt.Fprintf(&b, "questions %d; outcomes unknown (not sent again) %d; sends into the muted group while muted %d; the owner's wait for an answer: median %.1f s, longest %.1f s\n",
		r.questions, r.unknown, r.sendsMuted, r.ownerP50.Seconds()*scale, r.ownerMax.Seconds()*scale)
	fmt.Fprintf(&b, "the owner's longest wait while the bot was muted in the group %.1f s (debounce %.0f s)\n", r.ownerMutedMax.Seconds()*scale, 2.0)
	for _, w := range r.mutedSends {
		fmt.Fprintf(&b, "a send into the muted group: %s\n", w)
	}
	for _, w := range r.twiceWhat {
		fmt.Fprintf(&b, "twice: %s\n", w)
	}
	for _, w := range r.lostWhy {
		fmt.Fprintf(&b, "lost: %s\n", w)
	}
	return b.String()
}

// side is one bridge of the chaos, restartable.
type side struct {
	name    string
	adapter bridge.Adapter
	agent   *bridgetest.Agent
	out     *bridgetest.Outbox
	logs    *bridgetest.Logs
	manners config.Manners

	mu     sync.Mutex
	b      *bridge.Bridge
	cancel context.CancelFunc
	done   chan error
}

func (s *side) start(tb testing.TB) {
	b, err := bridge.New(bridge.Options{Name: s.name, Adapter: s.adapter, Agent: s.agent, Attach: s.out.Attach, Queue: s.out.Pending,
		Manners: s.manners, AgentName: func() string { return "cyan" }, Sent: s.logs.Sent(), Moves: s.logs.Moves(),
		Undelivered: s.logs.Undelivered()})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	s.mu.Lock()
	s.b, s.cancel, s.done = b, cancel, done
	s.mu.Unlock()
}

func (s *side) stop(tb testing.TB) {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	cancel()
	if err := <-done; err != nil {
		tb.Errorf("%s: Run: %v", s.name, err)
	}
}

func (s *side) status() bridge.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Status()
}

func runChaos(tb testing.TB, minutes int) chaosResult {
	rng := rand.New(rand.NewPCG(1, 2))
	var rmu sync.Mutex
	rnd := func(n int) int { rmu.Lock(); defer rmu.Unlock(); return rng.IntN(n) }
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rnd(int(hi-lo)+1)) }
	log := slog.New(slog.DiscardHandler)
	m := config.DefaultManners()
	m.Debounce, m.MaxWait = config.Duration(sim(2*time.Second)), config.Duration(sim(8*time.Second))
	m.ReplyDelay, m.CharDelay, m.MaxDelay, m.TypingEvery = 0, 0, 0, 0
	m.GroupTurns, m.UserTurns = 1000, 1000

	var answerN atomic.Int64
	published := map[string]string{} // answer tag → bridge
	var pmu sync.Mutex
	reply := func(name string) func(bridge.Turn, []bridge.Inbound) string {
		return func(t bridge.Turn, hist []bridge.Inbound) string {
			tag := fmt.Sprintf("[#%d]", answerN.Add(1))
			pmu.Lock()
			published[tag] = name
			pmu.Unlock()
			last := ""
			if len(hist) > 0 {
				last = hist[len(hist)-1].Text
			}
			return tag + " re: " + short(last)
		}
	}

	// QQ: NapCat, reverse WebSocket.
	impl := &onebottest.Impl{SelfID: 10001, HeartInterval: -1, KernelTimeout: sim(10 * time.Second)}
	impl.Confirm = func() time.Duration {
		if rnd(6) == 0 {
			return between(sim(9*time.Second), sim(14*time.Second))
		}
		return between(0, sim(8*time.Second))
	}
	qa, err := onebot.New(onebot.Options{Name: "qq", Mode: "reverse", Logger: log, Timeout: sim(15 * time.Second)})
	if err != nil {
		tb.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(onebot.ReversePath, onebot.NewReverseMux(log, map[string]*onebot.Adapter{"qq": qa}))
	qsrv := httptest.NewServer(mux)
	defer qsrv.Close()
	qurl := "ws" + strings.TrimPrefix(qsrv.URL, "http") + onebot.ReversePath
	qout := bridgetest.NewOutbox()
	qout.Retry = func(a int) time.Duration { return sim(time.Second << min(a-1, 6)) }
	qq := &side{name: "qq", adapter: qa, out: qout, logs: &bridgetest.Logs{}, manners: m,
		agent: &bridgetest.Agent{Out: qout, Owners: map[string]bool{"qq:9": true}}}
	qq.agent.Reply = reply("qq")
	qq.start(tb)
	connectQQ := func() {
		for i := 0; ; i++ {
			if err := impl.Connect(context.Background(), qurl); err == nil {
				return
			} else if i > 200 {
				tb.Fatalf("NapCat cannot connect: %v", err)
			}
			time.Sleep(sim(time.Second))
		}
	}
	connectQQ()

	// Telegram.
	fake := &tgtest.Server{Token: "123:abc", Bot: tgtest.User{ID: 777, IsBot: true, FirstName: "Cyan", Username: "cyan_bot"}}
	fake.SendDelays = func() time.Duration {
		if rnd(20) == 0 {
			return sim(55 * time.Second)
		}
		return between(0, sim(8*time.Second))
	}
	tsrv := httptest.NewServer(fake)
	defer tsrv.Close()
	ta, err := telegram.New(telegram.Options{Name: "tg", Token: "123:abc", APIURL: tsrv.URL, PollTimeout: sim(50 * time.Second),
		SendTimeout: sim(50 * time.Second), Logger: log})
	if err != nil {
		tb.Fatal(err)
	}
	tout := bridgetest.NewOutbox()
	tout.Retry = qout.Retry
	tg := &side{name: "tg", adapter: ta, out: tout, logs: &bridgetest.Logs{}, manners: m, agent: &bridgetest.Agent{Out: tout}}
	tg.agent.Reply = reply("tg")
	tg.start(tb)

	for deadline := time.Now().Add(10 * time.Second); !qq.status().Connected || !tg.status().Connected; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatal("the bridges did not connect")
		}
	}

	// The owner's private messages and when each was answered.
	type ask struct {
		at   time.Time
		text string
	}
	var owner []ask
	var mutedWindows [][2]time.Time
	start := time.Now()
	questions := 0
	tgChat := int64(-500)
	amy := &tgtest.User{ID: 1, FirstName: "Amy", Username: "amy"}
	events := map[int]bool{} // sim second → done
	end := time.Duration(minutes) * time.Minute
	var muteUntil time.Time
	var qqRestarted, tgRestarted bool
	for sec := 0; time.Duration(sec)*time.Second < end; sec++ {
		// wait for the simulated second
		if d := time.Until(start.Add(sim(time.Duration(sec) * time.Second))); d > 0 {
			time.Sleep(d)
		}
		at := time.Duration(sec) * time.Second
		switch {
		case at == 2*time.Minute && !events[sec], at == 6*time.Minute && !events[sec]:
			events[sec] = true
			if err := impl.Mute(42, 7, time.Hour, at == 2*time.Minute); err != nil {
				tb.Logf("mute: %v", err)
			}
			muteUntil = time.Now().Add(sim(45 * time.Second))
			mutedWindows = append(mutedWindows, [2]time.Time{time.Now(), muteUntil})
		case at == 3*time.Minute, at == 8*time.Minute:
			impl.Disconnect()
			time.Sleep(sim(2 * time.Second))
			connectQQ()
		case at == 4*time.Minute && !qqRestarted:
			qqRestarted = true
			qq.stop(tb)
			qq.start(tb)
			impl.Disconnect()
			connectQQ()
		case at == 5*time.Minute:
			fake.Migrate(tgChat, -100500, amy, true)
			tgChat = -100500
		case at == 7*time.Minute && !tgRestarted:
			tgRestarted = true
			tg.stop(tb)
			tg.start(tb)
		}
		if !muteUntil.IsZero() && time.Now().After(muteUntil) {
			muteUntil = time.Time{}
			if err := impl.Unmute(42, 7); err != nil {
				tb.Logf("unmute: %v", err)
			}
		}
		// the QQ group: two messages a second, one in ten to the bot
		for range 2 {
			u := int64(100 + rnd(200))
			if rnd(10) == 0 {
				questions++
				_, _ = impl.Group(42, onebottest.Sender{UserID: u, Nickname: fmt.Sprint("m", u)}, onebottest.At("10001"), onebottest.Text(fmt.Sprintf(" question %d?", questions)))
			} else {
				_, _ = impl.Group(42, onebottest.Sender{UserID: u, Nickname: fmt.Sprint("m", u)}, onebottest.Text("chatter"))
			}
		}
		if sec%30 == 15 {
			questions++
			text := fmt.Sprintf("owner question %d", questions)
			if _, err := impl.Private(onebottest.Sender{UserID: 9, Nickname: "owner"}, onebottest.Text(text)); err == nil {
				owner = append(owner, ask{time.Now(), text})
			}
		}
		// the Telegram group: a message a second, one in eight to the bot
		chat := tgtest.Chat{ID: tgChat, Type: "group", Title: "friends"}
		if tgChat != -500 {
			chat.Type = "supergroup"
		}
		if rnd(8) == 0 {
			questions++
			fake.Push(tgtest.Message{From: amy, Chat: chat, Text: fmt.Sprintf("@cyan_bot question %d?", questions),
				Entities: []tgtest.Entity{{Type: "mention", Offset: 0, Length: 9}}})
		} else {
			fake.Push(tgtest.Message{From: &tgtest.User{ID: int64(2 + rnd(30)), FirstName: "p"}, Chat: chat, Text: "chatter"})
		}
	}
	// Let what is held and in flight settle: two simulated minutes.
	time.Sleep(sim(2 * time.Minute))

	var r chaosResult
	r.perPlatform = map[string][4]int{}
	r.questions = questions
	posted := map[string]int{}
	count := func(texts []string) {
		for _, t := range texts {
			if i := strings.Index(t, "]"); strings.HasPrefix(t, "[#") && i > 0 {
				posted[t[:i+1]]++
			}
		}
	}
	count(impl.Posted("group", 42))
	count(impl.Posted("private", 9))
	count(fake.Posted(-500))
	count(fake.Posted(-100500))
	// the owner's waits: the i-th answer in the owner's chat answers the
	// i-th question
	calls := impl.Calls("send_private_msg")
	var waits []time.Duration
	for _, a := range owner {
		var answered time.Time
		for _, c := range calls {
			if strings.HasSuffix(c.Text(), "re: "+a.text) {
				answered = c.At
				break
			}
		}
		if !answered.IsZero() {
			w := answered.Sub(a.at)
			waits = append(waits, w)
			if os.Getenv("BRIDGE_CHAOS_DEBUG") != "" {
				tb.Logf("owner asked at %.1f s, answered after %.1f s", a.at.Sub(start).Seconds()*scale, w.Seconds()*scale)
			}
			r.ownerMax = max(r.ownerMax, w)
			for _, m := range mutedWindows {
				if !a.at.Before(m[0]) && a.at.Before(m[1]) {
					r.ownerMutedMax = max(r.ownerMutedMax, w)
				}
			}
		}
	}
	sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
	if len(waits) > 0 {
		r.ownerP50 = waits[len(waits)/2]
	}
	for _, c := range impl.Calls("send_group_msg") {
		for i, w := range mutedWindows {
			if !c.At.Before(w[0]) && c.At.Before(w[1]) {
				r.sendsMuted++
				how := "with its notice"
				if i == 1 {
					how = "its notice lost"
				}
				r.mutedSends = append(r.mutedSends, fmt.Sprintf("%.2f s after the mute (%s) began: %q", c.At.Sub(w[0]).Seconds()*scale, how, short(c.Text())))
			}
		}
	}
	undelivered := map[string]bridge.Undelivered{}
	for _, s := range []*side{qq, tg} {
		for _, u := range s.logs.AllUndelivered() {
			undelivered[u.Key] = u
		}
		st := s.status()
		r.unknown += int(st.Unknown)
	}
	pmu.Lock()
	for tag, name := range published {
		c := r.perPlatform[name]
		c[0]++
		r.owed++
		switch n := posted[tag]; {
		case n == 1:
			c[1]++
			r.once++
		case n > 1:
			c[2]++
			r.twice++
			what := name + " " + tag
			for _, c := range fake.Calls("sendMessage") {
				if strings.HasPrefix(c.Params["text"], tag) {
					what += fmt.Sprintf(" sent at %.1f s to %s;", c.At.Sub(start).Seconds()*scale, c.Params["chat_id"])
				}
			}
			r.twiceWhat = append(r.twiceWhat, what)
		default:
			c[3]++
			r.lost++
			why := "still waiting in the outbox"
			for _, u := range undelivered {
				if strings.HasPrefix(u.Text, tag) {
					why = u.Outcome + ": " + u.Reason
				}
			}
			r.lostWhy = append(r.lostWhy, fmt.Sprintf("%s %s: %s", name, tag, why))
		}
		r.perPlatform[name] = c
	}
	pmu.Unlock()
	qq.stop(tb)
	tg.stop(tb)
	return r
}

func short(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40])
	}
	return s
}
