package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/backoff"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/clocktest"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/supervise"
)

// rig is a daemon run in-process on a real data dir and the fake LLM; it
// can be stopped and started again on the same dir.
type rig struct {
	extra  []supervise.Part
	clock  *clocktest.Clock // nil: the wall clock
	t      *testing.T
	fake   *llmtest.Server
	env    map[string]string
	d      *Daemon
	base   string
	cancel context.CancelFunc
	done   chan error
}

func newRig(t *testing.T, files map[string]string, extra ...supervise.Part) *rig {
	t.Helper()
	fake := new(llmtest.Server)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	env := map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "CYAN_ADDR": "127.0.0.1:0",
		"CYAN_LLM_BASE_URL": srv.URL + "/v1", "CYAN_LLM_MODEL": "fake-model"}
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if name == "cyan.yaml" {
			env["CYAN_CONFIG"] = p
		}
	}
	r := &rig{t: t, fake: fake, env: env, extra: extra}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *rig) start() {
	r.t.Helper()
	cfg, err := config.Load(func(k string) string { return r.env[k] })
	if err != nil {
		r.t.Fatal(err)
	}
	addrc := make(chan net.Addr, 1)
	o := Options{Config: cfg, Ready: func(a net.Addr) { addrc <- a }}
	if r.clock != nil {
		o.Clock = r.clock
	}
	r.d, err = New(o)
	if err != nil {
		r.t.Fatal(err)
	}
	r.d.extra, r.d.restart = r.extra, backoff.Policy{Base: 20 * time.Millisecond, Max: 40 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- r.d.Run(ctx) }()
	select {
	case a := <-addrc:
		r.base = "http://" + a.String()
	case err := <-r.done:
		r.t.Fatalf("the daemon stopped: %v", err)
	}
}

func (r *rig) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	if err := <-r.done; err != nil {
		r.t.Errorf("Run: %v", err)
	}
	r.cancel = nil
}

func (r *rig) say(channel, text string) []string {
	r.t.Helper()
	resp, err := http.Post(r.base+"/api/v1/messages", "application/json", strings.NewReader(fmt.Sprintf(`{"channel":%q,"user":"alice","text":%q}`, channel, text)))
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Replies []string }
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 200 {
		r.t.Fatalf("post %q: %d", text, resp.StatusCode)
	}
	return out.Replies
}

// streamClient reads GET /api/v1/stream until closed.
type streamClient struct {
	resp *http.Response
	msgs chan [2]string // id, text
}

func (r *rig) follow(channel, lastID string) *streamClient {
	r.t.Helper()
	req, _ := http.NewRequest("GET", r.base+"/api/v1/stream?channel="+channel, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		r.t.Fatalf("stream: %v %v", resp, err)
	}
	c := &streamClient{resp: resp, msgs: make(chan [2]string, 64)}
	ready := make(chan struct{})
	go func() {
		defer close(c.msgs)
		sc := bufio.NewScanner(resp.Body)
		var id, event string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "ready":
				close(ready)
			case strings.HasPrefix(line, "data: ") && event == "message":
				var m struct{ Text string }
				json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m)
				c.msgs <- [2]string{id, m.Text}
			}
		}
	}()
	<-ready
	return c
}

// next reads n messages; it fails on a silence of 10 s.
func (c *streamClient) next(t *testing.T, n int) (texts []string, lastID string) {
	t.Helper()
	for range n {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				t.Fatalf("the stream ended after %v", texts)
			}
			texts, lastID = append(texts, m[1]), m[0]
		case <-time.After(10 * time.Second):
			t.Fatalf("the stream stopped after %v", texts)
		}
	}
	return texts, lastID
}

func (c *streamClient) close() { c.resp.Body.Close() }

// TestStreamResumesWithLastEventID: a client of the stream goes away in
// the middle of a conversation, comes back with Last-Event-ID, and gets
// every message it missed, once, in order — also across a restart of the
// daemon.
func TestStreamResumesWithLastEventID(t *testing.T) {
	r := newRig(t, nil)
	c := r.follow("home", "")
	r.fake.Enqueue(llmtest.Reply{Text: "r1"})
	r.say("home", "one")
	got, last := c.next(t, 1)
	c.close() // the page blinks
	r.fake.Enqueue(llmtest.Reply{Text: "r2a\n@br\nr2b"})
	r.say("home", "two")
	r.fake.Enqueue(llmtest.Reply{Text: "not this channel's"})
	r.say("elsewhere", "three")
	r.fake.Enqueue(llmtest.Reply{Text: "r3"})
	r.say("home", "three")
	c = r.follow("home", last)
	more, last := c.next(t, 3)
	r.fake.Enqueue(llmtest.Reply{Text: "r4"})
	r.say("home", "four")
	tail, _ := c.next(t, 1)
	got = append(append(got, more...), tail...)
	if fmt.Sprint(got) != "[r1 r2a r2b r3 r4]" {
		t.Fatalf("the stream gave %v: every message once, in order", got)
	}
	c.close()

	// The client last saw r3; the daemon restarts; the client resumes.
	r.stop()
	r.start()
	r.fake.Enqueue(llmtest.Reply{Text: "r5"})
	r.say("home", "five")
	c = r.follow("home", last)
	defer c.close()
	if after, _ := c.next(t, 1); fmt.Sprint(after) != "[r4]" {
		t.Fatalf("after the restart the stream gave %v", after)
	}
	if after, _ := c.next(t, 1); fmt.Sprint(after) != "[r5]" {
		t.Fatalf("after the restart the stream then gave %v", after)
	}
}

// component records the packets it acknowledged; while down it refuses.
type component struct {
	mu    sync.Mutex
	got   []string
	down  bool
	acked chan struct{}
}

func (c *component) Deliver(_ context.Context, d router.Delivery) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		return fmt.Errorf("%s: not connected", d.Channel)
	}
	c.got = append(c.got, d.Text)
	c.acked <- struct{}{}
	return nil
}

func (c *component) received(t *testing.T, n int) string {
	t.Helper()
	for range n {
		select {
		case <-c.acked:
		case <-time.After(10 * time.Second):
			t.Fatalf("deliveries stopped at %v", c.got)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.got, " ")
}

// TestOneReplyReachesThreeComponentsAcrossARestart: a page, a voice and a
// QQ bridge subscribe; the bridge is down while a reply goes out and the
// daemon restarts; each gets every packet exactly once, in order, the
// bridge after it comes back.
func TestOneReplyReachesThreeComponentsAcrossARestart(t *testing.T) {
	r := newRig(t, nil)
	for name, pats := range map[string][]string{"page": {"home"}, "speaker": {"*"}, "qq": {"home", "qq:group:*"}} {
		if err := r.d.Router().Subscribe(name, pats); err != nil {
			t.Fatal(err)
		}
	}
	page, voice := &component{acked: make(chan struct{}, 16)}, &component{acked: make(chan struct{}, 16)}
	qq := &component{acked: make(chan struct{}, 16), down: true}
	attach := func(comps map[string]*component) func() {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for name, c := range comps {
			wg.Go(func() { r.d.Router().Attach(ctx, name, c) })
		}
		return func() { cancel(); wg.Wait() }
	}
	detach := attach(map[string]*component{"page": page, "speaker": voice, "qq": qq})
	r.fake.Enqueue(llmtest.Reply{Text: "hello\n@br\nhow was the run?"})
	r.say("home", "hi")
	if got := page.received(t, 2); got != "hello how was the run?" {
		t.Fatalf("page: %q", got)
	}
	voice.received(t, 2)
	// The last acknowledgement is written a moment after Deliver returns;
	// a detach before it would rightly hand "how was the run?" over again
	// after the restart. Wait for the page's and the speaker's.
	waitAcked(t, r, "page", "speaker")
	detach()
	r.stop()

	r.start()
	qq.mu.Lock()
	qq.down = false
	qq.mu.Unlock()
	detach = attach(map[string]*component{"page": page, "speaker": voice, "qq": qq})
	r.fake.Enqueue(llmtest.Reply{Text: "good"})
	r.say("home", "great")
	want := "hello how was the run? good"
	if got := page.received(t, 1); got != want {
		t.Errorf("page received %q, want %q", got, want)
	}
	if got := voice.received(t, 1); got != want {
		t.Errorf("voice received %q, want %q", got, want)
	}
	if got := qq.received(t, 3); got != want {
		t.Errorf("qq received %q, want %q", got, want)
	}
	// Each component's last acknowledgement is written a moment after its
	// Deliver returns; a detach before that rightly hands it over again.
	deadline := time.Now().Add(10 * time.Second)
	for busy := true; busy && time.Now().Before(deadline); {
		busy = false
		for _, s := range r.d.Router().Status() {
			if s.Name != voiceSubscriber && (s.Pending != 0 || s.Delivered == 0) {
				busy = true
			}
		}
		time.Sleep(time.Millisecond)
	}
	detach()
	for _, s := range r.d.Router().Status() {
		if s.Name == voiceSubscriber {
			continue // the daemon's own voice (of the desktop channel)
		}
		if s.Pending != 0 || s.Delivered == 0 {
			t.Errorf("router status %+v", s)
		}
	}
}

// TestSpeakingObserverDoesNotWakeItself: a persona observer of "after a
// response" that speaks first. Its own proactive turn ends with a
// response too; it must not wake it again.
func TestSpeakingObserverDoesNotWakeItself(t *testing.T) {
	r := newRig(t, map[string]string{
		"persona/persona.md":             "---\nname: Tester\n---\nYou are ${agent_name}.\n",
		"persona/observers/chatter.yaml": "name: chatter\ntriggers: [{on: AfterAIResponse}]\nprompt: add something when it helps\nchannels: [home]\n",
		"cyan.yaml":                      "persona: persona\n",
	})
	var mu sync.Mutex
	decides := 0
	r.fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.Contains(req.System, `as its observer "chatter"`):
			mu.Lock()
			decides++
			mu.Unlock()
			return llmtest.Reply{Text: `{"speak": true, "note": "ask about the run"}`}
		case strings.Contains(last, "Observer chatter suggests you speak first"):
			return llmtest.Reply{Text: "by the way, how was the run?"}
		}
		return llmtest.Reply{Text: "hello"}
	})
	r.say("home", "hi")
	// main-observer runs after every turn, the proactive one included:
	// once it has run twice, the proactive turn's end was dispatched.
	deadline := time.Now().Add(20 * time.Second)
	for {
		runs := map[string]int{}
		for _, s := range r.d.obs.m.Status() {
			runs[s.Name] = s.Runs
		}
		if runs["main-observer"] >= 2 && r.d.obs.m.Idle() {
			if runs["chatter"] != 1 {
				t.Fatalf("chatter ran %d times; its own speech woke it", runs["chatter"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the observers did not finish: %v", runs)
		}
		time.Sleep(10 * time.Millisecond) // polling the observers' end, not a schedule
	}
	mu.Lock()
	defer mu.Unlock()
	if decides != 1 {
		t.Fatalf("chatter decided %d times", decides)
	}
}

func (r *rig) health() map[string]supervise.State {
	r.t.Helper()
	resp, err := http.Get(r.base + "/healthz")
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		OK       bool
		Degraded bool
		Parts    []supervise.State
	}
	json.NewDecoder(resp.Body).Decode(&h)
	out := map[string]supervise.State{}
	for _, p := range h.Parts {
		out[p.Name] = p
	}
	if !h.OK || len(out) < 10 {
		r.t.Fatalf("healthz: %+v", h)
	}
	return out
}

// TestAFailingPartIsRestartedAndShown: a part that panics over and over
// is restarted with backoff, the rest goes on, and /healthz shows it.
func TestAFailingPartIsRestartedAndShown(t *testing.T) {
	r := newRig(t, nil, supervise.Part{Name: "flaky-bridge", Run: func(ctx context.Context) error {
		var m map[string]int
		m["boom"]++ // a bug: it panics on every start
		return nil
	}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		h := r.health()
		p := h["flaky-bridge"]
		if p.Restarts >= 3 {
			if p.LastError != "panic: assignment to entry in nil map" || p.State == supervise.Stopped {
				t.Fatalf("flaky part: %+v", p)
			}
			if h["api"].State != supervise.Running || h["observers"].State != supervise.Running {
				t.Fatalf("the other parts: %+v", h)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not restarted: %+v", p)
		}
		time.Sleep(10 * time.Millisecond) // polling the supervisor, whose backoff is 20–40 ms here
	}
	r.fake.Enqueue(llmtest.Reply{Text: "still here"})
	if got := r.say("home", "hi"); fmt.Sprint(got) != "[still here]" {
		t.Fatalf("the daemon answers %v", got)
	}
}

// TestAFatalPartStopsTheDaemon: a part that cannot go on stops the whole
// daemon, which says which part and why.
func TestAFatalPartStopsTheDaemon(t *testing.T) {
	connect := make(chan struct{})
	r := newRig(t, nil, supervise.Part{Name: "qq", Run: func(ctx context.Context) error {
		<-connect
		return supervise.Fatal(errors.New("the OneBot server refused the access token; set bridges.qq.token"))
	}})
	close(connect)
	select {
	case err := <-r.done:
		r.cancel = nil
		if err == nil || err.Error() != "part qq failed and the daemon cannot go on without it: the OneBot server refused the access token; set bridges.qq.token" {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon did not stop")
	}
	if _, held, _ := store.Holder(r.env["CYAN_DATA_DIR"]); held {
		t.Fatal("the data dir is still locked")
	}
}

// TestADeferredPlanFiresAtItsTimeAfterARestart: a plan made for an hour
// later survives a restart and speaks first when the daemon's clock
// reaches it, not before. The clock is the daemon's, settable: nothing
// waits for the wall clock.
func TestADeferredPlanFiresAtItsTimeAfterARestart(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.Local)
	clock := clocktest.New(t0)
	fake := new(llmtest.Server)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	dir := t.TempDir()
	r := &rig{t: t, fake: fake, clock: clock, env: map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "CYAN_ADDR": "127.0.0.1:0",
		"CYAN_LLM_BASE_URL": srv.URL + "/v1", "CYAN_LLM_MODEL": "fake-model"}}
	r.start()
	defer r.stop()
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "Plan p1 is due") {
			return llmtest.Reply{Text: "time to stretch!"}
		}
		return llmtest.Reply{Text: "<empty_reply>"}
	})
	due := t0.Add(time.Hour)
	fake.Enqueue(llmtest.Reply{Text: "I will remind you", ToolCalls: []llm.ToolCall{{ID: "p", Name: "plan",
		Arguments: fmt.Sprintf(`{"op":"create","text":"remind alice to stretch","at":%q}`, due.Format(time.RFC3339))}}})
	r.say("home", "remind me to stretch in an hour")
	r.stop()

	clock.Set(t0.Add(59 * time.Minute))
	r.start()
	c := r.follow("home", "")
	defer c.close()
	waitIdle := func() {
		for deadline := time.Now().Add(10 * time.Second); !r.d.obs.m.Idle() || !r.d.obs.m.Has("plan:p1") && clock.Now().Before(due); {
			if time.Now().After(deadline) {
				t.Fatal("the observers did not settle")
			}
			time.Sleep(5 * time.Millisecond) // polling the scheduler, whose time stands still
		}
	}
	waitIdle()
	select {
	case m := <-c.msgs:
		t.Fatalf("spoke before the plan was due: %v", m)
	default:
	}
	clock.Set(due)
	if got, _ := c.next(t, 1); fmt.Sprint(got) != "[time to stretch!]" {
		t.Fatalf("at the due time the stream gave %v", got)
	}
}

// waitAcked waits until the router holds nothing pending for the named
// subscriptions (each has acknowledged all it was given).
func waitAcked(t *testing.T, r *rig, names ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		busy := false
		for _, s := range r.d.Router().Status() {
			if slices.Contains(names, s.Name) && s.Pending != 0 {
				busy = true
			}
		}
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v still have packets pending: %+v", names, r.d.Router().Status())
		}
		time.Sleep(time.Millisecond)
	}
}
