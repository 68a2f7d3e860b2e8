package router

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/backoff"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/store"
)

func openDB(t *testing.T, dir string) *badger.DB {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil).WithSyncWrites(true))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func openRouter(t *testing.T, db *badger.DB) *Router {
	t.Helper()
	r, err := Open(Options{DB: db, Prefix: "rtr\x00", Retry: backoff.Policy{Base: time.Millisecond, Max: 4 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// recorder is a component that keeps what it acknowledged, in order, and
// fails while down.
type recorder struct {
	mu       sync.Mutex
	got      []string
	attempts map[string]int
	down     bool
	acked    chan string
}

func newRecorder() *recorder {
	return &recorder{attempts: map[string]int{}, acked: make(chan string, 100)}
}

func (c *recorder) Deliver(_ context.Context, d Delivery) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts[d.Key]++
	if c.down {
		return errors.New("connection refused")
	}
	c.got = append(c.got, d.Text)
	c.acked <- d.Key
	return nil
}

func (c *recorder) tries(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attempts[key]
}

func (c *recorder) setDown(v bool) {
	c.mu.Lock()
	c.down = v
	c.mu.Unlock()
}

func (c *recorder) received() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.got, " ")
}

func (c *recorder) wait(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-c.acked:
		case <-time.After(10 * time.Second):
			t.Fatalf("deliveries stopped; got %q", c.received())
		}
	}
}

// attach runs Attach for each component until stop is called.
func attach(t *testing.T, r *Router, comps map[string]Component) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for name, c := range comps {
		wg.Go(func() {
			if err := r.Attach(ctx, name, c); err != nil {
				t.Errorf("attach %s: %v", name, err)
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

func publish(t *testing.T, r *Router, channel string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if _, err := r.Publish(Packet{Key: "k-" + s, Channel: channel, Kind: KindReply, Text: s}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestThreeComponentsOneDownAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	r := openRouter(t, db)
	for name, pats := range map[string][]string{"page": {"home"}, "voice": {"*"}, "qq": {"home", "qq:group:*"}} {
		if err := r.Subscribe(name, pats); err != nil {
			t.Fatal(err)
		}
	}
	page, voice, qq := newRecorder(), newRecorder(), newRecorder()
	qq.setDown(true)
	stop := attach(t, r, map[string]Component{"page": page, "voice": voice, "qq": qq})
	publish(t, r, "home", "1", "2", "3")
	publish(t, r, "elsewhere", "x") // the voice's only
	page.wait(t, 3)
	voice.wait(t, 4)
	for qq.tries("k-1") < 3 { // it keeps being retried while down
		time.Sleep(time.Millisecond)
	}
	// A delivery is acknowledged once the router has recorded it, a moment
	// after the component's Deliver returned: stopping before that hands it
	// over again after the restart, as it should.
	for wait := time.Now().Add(10 * time.Second); (r.pending("page") > 0 || r.pending("voice") > 0) && time.Now().Before(wait); {
		time.Sleep(time.Millisecond)
	}
	stop()
	if qq.received() != "" {
		t.Fatalf("a down component acknowledged %q", qq.received())
	}
	db.Close()

	// The daemon restarts; the same reply is published again (a feed that
	// had not saved its cursor), then more.
	db = openDB(t, dir)
	defer db.Close()
	r = openRouter(t, db)
	publish(t, r, "home", "3", "4")
	publish(t, r, "qq:group:7", "5")
	qq.setDown(false)
	stop = attach(t, r, map[string]Component{"page": page, "voice": voice, "qq": qq})
	defer stop()
	page.wait(t, 1)
	voice.wait(t, 2)
	qq.wait(t, 5)
	for name, want := range map[string]string{"page": "1 2 3 4", "voice": "1 2 3 x 4 5", "qq": "1 2 3 4 5"} {
		c := map[string]*recorder{"page": page, "voice": voice, "qq": qq}[name]
		if got := c.received(); got != want {
			t.Errorf("%s received %q, want %q (each once, in order)", name, got, want)
		}
	}
	// The last acknowledgements are recorded a moment after Deliver returns.
	deadline := time.Now().Add(10 * time.Second)
	for r.pending("page")+r.pending("voice")+r.pending("qq") > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for _, s := range r.Status() {
		if s.Pending != 0 || !s.Attached {
			t.Errorf("status %+v", s)
		}
	}
}

func TestPermanentFailureAndPanic(t *testing.T) {
	r := openRouter(t, openDB(t, t.TempDir()))
	r.Subscribe("c", []string{"*"})
	var mu sync.Mutex
	var got []string
	panicked := false
	done := make(chan struct{})
	stop := attach(t, r, map[string]Component{"c": ComponentFunc(func(_ context.Context, d Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case d.Text == "refused":
			return Permanent(errors.New("the chat is gone"))
		case d.Text == "boom" && !panicked:
			panicked = true
			panic("bridge bug")
		}
		got = append(got, fmt.Sprintf("%s#%d", d.Text, d.Attempt))
		if d.Text == "last" {
			close(done)
		}
		return nil
	})})
	publish(t, r, "c", "refused", "boom", "last")
	<-done
	// The acknowledgement of "last" is recorded a moment after Deliver returns.
	deadline := time.Now().Add(10 * time.Second)
	for r.Status()[0].Delivered < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(got) != "[boom#2 last#1]" {
		t.Fatalf("delivered %v", got)
	}
	st := r.Status()[0]
	if st.Failed != 1 || st.Delivered != 2 || st.LastError != "panic: bridge bug" {
		t.Fatalf("status %+v", st)
	}
}

func TestSubscribeChecks(t *testing.T) {
	r := openRouter(t, openDB(t, t.TempDir()))
	if err := r.Subscribe("x", nil); err == nil {
		t.Fatal("no patterns accepted")
	}
	if err := r.Attach(context.Background(), "nobody", ComponentFunc(nil)); err == nil || !strings.Contains(err.Error(), "Subscribe") {
		t.Fatalf("attach without subscription: %v", err)
	}
	r.Subscribe("x", []string{"*"})
	publish(t, r, "c", "kept")
	if err := r.Unsubscribe("x"); err != nil || len(r.Status()) != 0 || r.pending("x") != 0 {
		t.Fatalf("unsubscribe: %v %+v", err, r.Status())
	}
}

func TestFeedPublishesStoredReplies(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	st.Append(now, &store.Message{Channel: "home", Role: store.RoleAssistant, Text: "history, before the feed ever ran"})
	r := openRouter(t, st.DB())
	r.Subscribe("page", []string{"home"})
	j, _ := journal.Open(journal.Options{})
	defer j.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := r.Feed(ctx, st, j); err != nil {
			t.Error(err)
		}
	})
	page := newRecorder()
	stop := attach(t, r, map[string]Component{"page": page})
	defer stop()
	for !r.hasCursor() {
		time.Sleep(time.Millisecond)
	}
	in := &store.Message{Channel: "home", Role: store.RoleUser, Text: "hi"}
	st.Append(now, in)
	st.Append(now, &store.Message{Channel: "home", Role: store.RoleAssistant, Text: "one", ReplyTo: in.ID},
		&store.Message{Channel: "home", Role: store.RoleAssistant, Text: "two", Part: 1, ReplyTo: in.ID},
		&store.Message{Channel: "home", Role: store.RoleAssistant, Empty: true},
		&store.Message{Channel: "home", Role: store.RoleTool, ToolName: "speak", Text: `{"speech":[{"emotion":"happy","language":"en","text":"yay"}]}`})
	j.Post(journal.New(journal.MessageOut, "home", nil))
	page.wait(t, 3)
	cancel()
	wg.Wait()
	if got := page.received(); got != "one two yay" {
		t.Fatalf("page received %q", got)
	}
}

func (r *Router) hasCursor() bool {
	_, ok, _ := r.cursor()
	return ok
}

// TestSubscriptionsUseTheOneGlob: a subscription's "?" means one character,
// as in tts.channels — the router once knew only "*", so the voice
// subscribed to qq:group:?23 never got proactive or non-streamed replies.
func TestSubscriptionsUseTheOneGlob(t *testing.T) {
	r := openRouter(t, openDB(t, t.TempDir()))
	if err := r.Subscribe("voice", []string{"qq:group:?23"}); err != nil {
		t.Fatal(err)
	}
	voice := newRecorder()
	stop := attach(t, r, map[string]Component{"voice": voice})
	defer stop()
	publish(t, r, "qq:group:1123", "no")
	publish(t, r, "qq:group:123", "yes")
	voice.wait(t, 1)
	if got := voice.received(); got != "yes" {
		t.Fatalf("voice received %q, want only the reply to qq:group:123", got)
	}
	if err := r.Subscribe("bad", []string{"a\nb"}); err == nil || !strings.Contains(err.Error(), "line break") {
		t.Fatalf("a pattern with a line break: %v", err)
	}
}
