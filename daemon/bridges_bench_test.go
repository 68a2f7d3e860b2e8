package daemon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/bridge/onebot"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/onebottest"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/tools"
)

// BenchmarkOneBotBusyGroup simulates a group of 200 members sending 20
// messages a second for 60 s (BRIDGE_BENCH_SECONDS to change) through the
// fake OneBot implementation over a real WebSocket into a bridge with the
// default manners, main-virtual and a durable store in a temp dir; one in
// twenty messages mentions the bot. It reports the time from the event
// frame being written to the message being durable (p50, p99, max), the
// messages lost, the turns run and the most in any minute. The replies go
// the daemon's way: the router's feed puts them in the bridge's outbox and
// the bridge, attached to the router, sends them.
//
//	go test ./daemon -run XXX -bench OneBotBusyGroup -benchtime 1x
func BenchmarkOneBotBusyGroup(b *testing.B) {
	seconds := 60
	if s, err := strconv.Atoi(os.Getenv("BRIDGE_BENCH_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	for range b.N {
		r := busyGroup(b, seconds, false, false)
		b.ReportMetric(float64(r.p50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(r.p99.Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(r.max.Microseconds())/1000, "max-ms")
		b.ReportMetric(float64(r.rec99.Microseconds())/1000, "store-p99-ms")
		b.ReportMetric(float64(r.pre99.Microseconds())/1000, "bridge-p99-ms")
		if r.fsync99 > 0 {
			b.ReportMetric(float64(r.fsync99.Microseconds())/1000, "fsync-p99-ms")
		}
		b.ReportMetric(float64(r.sent), "messages")
		b.ReportMetric(float64(r.lost), "lost")
		b.ReportMetric(float64(r.turns), "turns")
		b.ReportMetric(float64(r.busiest), "max-turns/min")
		if r.lost != 0 || r.busiest > config.DefaultManners().GroupTurns {
			b.Errorf("lost %d messages, %d turns in the busiest minute (limit %d)", r.lost, r.busiest, config.DefaultManners().GroupTurns)
		}
	}
}

// BenchmarkOneBotBusyGroupStalledMedia is the busy group twice, beside
// each other: as it is, and with one more message every 5 s carrying three
// images that never download (their server holds each request until cyan
// gives up), while the implementation sends Lagrange.OneBot's 5 s
// heartbeat and the owner writes privately every 5 s (the per-person turn
// limit lifted, so that each is answered). It reports the
// messages lost, event → stored (p50, p99) of the group's ordinary
// messages, how long the stalled ones took to be stored (the media budget),
// the owner's private answer latency (event → send_private_msg, the 2 s
// debounce included) and the disconnections.
//
//	go test ./daemon -run XXX -bench OneBotBusyGroupStalledMedia -benchtime 1x
func BenchmarkOneBotBusyGroupStalledMedia(b *testing.B) {
	seconds := 60
	if s, err := strconv.Atoi(os.Getenv("BRIDGE_BENCH_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	for _, stalls := range []bool{false, true} {
		name := "no-stalls"
		if stalls {
			name = "stalls"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				r := busyGroup(b, seconds, stalls, true)
				b.ReportMetric(float64(r.sent), "messages")
				b.ReportMetric(float64(r.lost), "lost")
				b.ReportMetric(float64(r.p50.Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(r.p99.Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(r.stalledMax.Microseconds())/1000, "stalled-stored-max-ms")
				b.ReportMetric(float64(r.owner50.Microseconds())/1000, "owner-p50-ms")
				b.ReportMetric(float64(r.ownerMax.Microseconds())/1000, "owner-max-ms")
				b.ReportMetric(float64(r.drops), "disconnects")
				if r.lost != 0 || r.drops != 0 || r.ownerLost != 0 {
					b.Errorf("lost %d messages and %d owner answers, %d disconnects", r.lost, r.ownerLost, r.drops)
				}
			}
		})
	}
}

type busyResult struct {
	stalled, ownerLost, drops int
	stalledMax                time.Duration // event → stored of the stalled messages, the longest
	owner50, ownerMax         time.Duration // the owner's private message → its answer sent
	p50, p99, max             time.Duration
	rec50, rec99              time.Duration // of that, storing (Badger commit with fsync)
	fsync50, fsync99          time.Duration // the disk alone: a 1 KiB write and fsync beside the run
	pre50, pre99              time.Duration // event → the store called: the bridge's own path
	sent, lost, turns         int
	busiest                   int
}

// timedAgent times Record: the durable write, fsync included.
type timedAgent struct {
	bridge.Agent
	mu    sync.Mutex
	took  []time.Duration
	begin map[string]time.Time // when the store was called, by platform id
}

func (a *timedAgent) Record(ctx context.Context, in bridge.Inbound) (string, error) {
	t := time.Now()
	id, err := a.Agent.Record(ctx, in)
	d := time.Since(t)
	a.mu.Lock()
	if a.begin == nil {
		a.begin = map[string]time.Time{}
	}
	a.begin[in.ExternalID] = t
	a.took = append(a.took, d)
	a.mu.Unlock()
	return id, err
}

// busyGroup runs the busy group; stalls adds a message with stalled media
// every 5 s, owner the owner's private message every 5 s (with no
// per-person turn limit, so each is answered).
func busyGroup(b *testing.B, seconds int, stalls, owner bool) busyResult {
	fake, client := llmtest.Start(b)
	var tmu sync.Mutex
	var turnTimes []time.Time
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		tmu.Lock()
		turnTimes = append(turnTimes, time.Now())
		tmu.Unlock()
		return llmtest.Reply{Text: "ok"}
	})
	// BRIDGE_BENCH_INMEMORY=1 keeps the store in memory: the path without
	// the disk's fsync.
	st, err := store.Open(store.Options{Dir: b.TempDir(), InMemory: os.Getenv("BRIDGE_BENCH_INMEMORY") == "1"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	p, _ := persona.Default()
	mv, err := mainvirtual.New(mainvirtual.Options{Store: st, LLM: client, Persona: func() *persona.Persona { return p }, Agent: config.Defaults().Agent})
	if err != nil {
		b.Fatal(err)
	}
	owners, _ := tools.ParseOwners(nil)
	agent := &timedAgent{Agent: bridgeAgent{StoreHistory: bridge.StoreHistory{Store: st}, mv: mv, reg: tools.New(tools.Options{Owners: owners})}}
	// The stalled images' server is on loopback, which the production
	// fetch policy refuses: the benchmark admits it.
	ad, _ := onebot.New(onebot.Options{Name: "qq", Mode: "reverse", AccessToken: "t",
		Media: &bridge.FetchPolicy{Allow: func(ap netip.AddrPort) bool { return ap.Addr().IsLoopback() }}})
	rt, err := router.Open(router.Options{DB: st.DB(), Prefix: store.PrefixRouter, Journal: st.Journal()})
	if err != nil {
		b.Fatal(err)
	}
	if err := rt.Subscribe("bridge:qq", []string{"qq:*"}); err != nil {
		b.Fatal(err)
	}
	sent, err := bridge.NewStoreSent(st, "qq")
	if err != nil {
		b.Fatal(err)
	}
	pending := func() int { return rt.Status()[0].Pending }
	var smu sync.Mutex
	stored := map[string]time.Time{}
	manners := config.DefaultManners()
	if owner {
		manners.UserTurns = 0 // the owner writes every 5 s, over the default 3 a minute
	}
	br, err := bridge.New(bridge.Options{Name: "qq", Adapter: ad, Agent: agent, Manners: manners,
		Attach: func(ctx context.Context, c router.Component) error { return rt.Attach(ctx, "bridge:qq", c) },
		Sent:   sent, Queue: pending, Journal: st.Journal(), DataDir: b.TempDir(),
		AgentName: mv.AgentName, Stored: func(_ bridge.Chat, id string) {
			now := time.Now()
			smu.Lock()
			stored[id] = now
			smu.Unlock()
		}})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(onebot.NewReverseMux(nil, map[string]*onebot.Adapter{"qq": ad}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- br.Run(ctx) }()
	go func() { done <- rt.Feed(ctx, st, st.Journal()) }()
	// Lagrange.OneBot: a 5 s heartbeat; the link must live through it all.
	impl := &onebottest.Impl{SelfID: 10001, Token: "t", Lagrange: true}
	var hmu sync.Mutex
	held := 0
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hmu.Lock()
		held++
		hmu.Unlock()
		<-r.Context().Done() // an image that never arrives
	}))
	defer images.Close()
	if err := impl.Connect(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")); err != nil {
		b.Fatal(err)
	}
	for br.Status().Self == "" {
		time.Sleep(time.Millisecond)
	}
	impl.WaitCalls(ctx, 1, "get_login_info")
	time.Sleep(200 * time.Millisecond) // the login's answer reported
	since := br.Status().Since
	// The disk's own fsync latency during the run, on a file of its own
	// in the same file system (10 a second), to compare the store with.
	var fsyncs []time.Duration
	probeDone := make(chan struct{})
	if os.Getenv("BRIDGE_BENCH_INMEMORY") != "1" {
		go func() {
			defer close(probeDone)
			fsyncs = fsyncProbe(ctx, b.TempDir())
		}()
	} else {
		close(probeDone)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	sentAt := map[string]time.Time{}
	stalledAt := map[string]time.Time{}
	var ownerAt []time.Time
	total := 20 * seconds
	tick := time.NewTicker(50 * time.Millisecond)
	b.ResetTimer()
	for i := range total {
		<-tick.C
		member := int64(rng.IntN(200) + 1)
		segs := []onebottest.Seg{onebottest.Text(fmt.Sprintf("message %d, about %d things", i, rng.IntN(1000)))}
		if rng.IntN(20) == 0 {
			segs = append([]onebottest.Seg{onebottest.At("10001")}, segs...)
		}
		id := int64(1_000_000 + i)
		at := time.Now()
		if err := impl.GroupWithID(id, 555, onebottest.Sender{UserID: member, Nickname: fmt.Sprint("member", member)}, segs...); err != nil {
			b.Fatal(err)
		}
		sentAt[strconv.FormatInt(id, 10)] = at
		if owner && i%100 == 50 { // every 5 s, the owner writes privately
			ownerAt = append(ownerAt, time.Now())
			if _, err := impl.Private(onebottest.Sender{UserID: 1001, Nickname: "hareru"}, onebottest.Text(fmt.Sprint("are you there? ", i))); err != nil {
				b.Fatal(err)
			}
		}
		if stalls && i%100 == 0 { // every 5 s, three images that never download
			sid := int64(2_000_000 + i)
			img := func(k int) onebottest.Seg {
				return onebottest.Image(fmt.Sprintf("%d-%d.jpg", sid, k), fmt.Sprintf("%s/%d-%d.jpg", images.URL, sid, k))
			}
			at := time.Now()
			if err := impl.GroupWithID(sid, 555, onebottest.Sender{UserID: member, Nickname: fmt.Sprint("member", member)},
				onebottest.Text("look"), img(1), img(2), img(3)); err != nil {
				b.Fatal(err)
			}
			stalledAt[strconv.FormatInt(sid, 10)] = at
		}
	}
	tick.Stop()
	total += len(stalledAt)
	// Let the last messages land and the last turn finish.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		smu.Lock()
		n := 0 // of the group's messages; the owner's are in stored too
		for id := range stored {
			if _, ok := sentAt[id]; ok {
				n++
			} else if _, ok := stalledAt[id]; ok {
				n++
			}
		}
		smu.Unlock()
		if n == total && br.Status().Queue == 0 && len(impl.Calls("send_private_msg")) >= len(ownerAt) {
			break
		}
	}
	res := busyResult{sent: total}
	if st := br.Status(); !st.Connected || !st.Since.Equal(since) || !impl.Connected() {
		res.drops = 1 // at least: the link was lost and made again
		b.Logf("the link dropped: %+v", st)
	}
	b.StopTimer()
	cancel()
	<-done
	<-done
	<-probeDone
	var lat []time.Duration
	smu.Lock()
	for id, at := range stalledAt {
		if s, ok := stored[id]; ok {
			res.stalled++
			res.stalledMax = max(res.stalledMax, s.Sub(at))
		} else {
			res.lost++
		}
	}
	for id, at := range sentAt {
		if s, ok := stored[id]; ok {
			lat = append(lat, s.Sub(at))
		} else {
			res.lost++
		}
	}
	smu.Unlock()
	answers := impl.Calls("send_private_msg")
	var ownerLat []time.Duration
	for k, at := range ownerAt {
		if k < len(answers) {
			ownerLat = append(ownerLat, answers[k].At.Sub(at))
		} else {
			res.ownerLost++
		}
	}
	slices.Sort(ownerLat)
	if n := len(ownerLat); n > 0 {
		res.owner50, res.ownerMax = ownerLat[n/2], ownerLat[n-1]
	}
	hmu.Lock()
	b.Logf("stalled messages %d, stored %d (longest %s), image requests held %d; owner answers %d of %d: %v", len(stalledAt), res.stalled, res.stalledMax, held, len(ownerLat), len(ownerAt), ownerLat)
	hmu.Unlock()
	msgs, _ := st.Recent("qq:group:555", store.Window{Limit: total * 2, Keep: func(m *store.Message) bool { return m.Role == store.RoleUser }})
	if len(msgs) != total {
		res.lost = max(res.lost, total-len(msgs))
	}
	type slow struct {
		id string
		d  time.Duration
	}
	var worst []slow
	smu.Lock()
	for id, at := range sentAt {
		if s, ok := stored[id]; ok {
			worst = append(worst, slow{id, s.Sub(at)})
		}
	}
	smu.Unlock()
	slices.SortFunc(worst, func(a, b slow) int { return int(b.d - a.d) })
	if len(worst) > 8 {
		worst = worst[:8]
	}
	b.Logf("slowest: %v", worst)
	slices.Sort(lat)
	if len(lat) > 0 {
		res.p50, res.p99, res.max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	}
	agent.mu.Lock()
	var pre []time.Duration
	for id, at := range sentAt {
		if t, ok := agent.begin[id]; ok {
			pre = append(pre, t.Sub(at))
		}
	}
	slices.Sort(pre)
	if n := len(pre); n > 0 {
		res.pre50, res.pre99 = pre[n/2], pre[n*99/100]
	}
	slices.Sort(agent.took)
	if n := len(agent.took); n > 0 {
		res.rec50, res.rec99 = agent.took[n/2], agent.took[n*99/100]
	}
	agent.mu.Unlock()
	slices.Sort(fsyncs)
	if n := len(fsyncs); n > 0 {
		res.fsync50, res.fsync99 = fsyncs[n/2], fsyncs[n*99/100]
	}
	tmu.Lock()
	res.turns = len(turnTimes)
	for i := range turnTimes {
		n := 0
		for j := i; j < len(turnTimes) && turnTimes[j].Sub(turnTimes[i]) < time.Minute; j++ {
			n++
		}
		res.busiest = max(res.busiest, n)
	}
	tmu.Unlock()
	b.Logf("%d messages from 200 members in %d s: stored %d, lost %d; event→stored p50 %s p99 %s max %s (event → the store called: p50 %s p99 %s; the durable write alone: p50 %s p99 %s; the disk's fsync beside it: p50 %s p99 %s); %d turns, at most %d in a minute",
		total, seconds, len(lat), res.lost, res.p50, res.p99, res.max, res.pre50, res.pre99, res.rec50, res.rec99, res.fsync50, res.fsync99, res.turns, res.busiest)
	return res
}

// fsyncProbe writes 1 KiB and fsyncs it, ten times a second, until ctx
// ends, and returns how long each took.
func fsyncProbe(ctx context.Context, dir string) []time.Duration {
	f, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, 1024)
	var out []time.Duration
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return out
		case <-tick.C:
		}
		t := time.Now()
		if _, err := f.Write(buf); err != nil {
			return out
		}
		if err := f.Sync(); err != nil {
			return out
		}
		out = append(out, time.Since(t))
	}
}
