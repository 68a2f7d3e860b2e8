package bridge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cyan-agent/cyan/backoff"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/store"
)

func TestAPacketSentBeforeARestartIsNotSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := newMemSent(16)
		r := newRig(t, func(o *Options) { o.Sent = sent })
		defer r.stop()
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:group:42", Kind: router.KindReply, Text: "once"})
		synctest.Wait()
		// the router offers it again: the daemon stopped before the
		// acknowledgement
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:group:42", Kind: router.KindReply, Text: "once"})
		r.out.pushPacket(router.Packet{Key: "k2", Channel: "t:group:42", Kind: router.KindReply, Text: "twice"})
		synctest.Wait()
		if got, want := r.ad.sentSoFar(), []string{"t:group:42 once", "t:group:42 twice"}; !slices.Equal(got, want) {
			t.Errorf("sent %q, want %q", got, want)
		}
		if id, ok := sent.Sent("k1"); !ok || id != "s1" {
			t.Errorf("sent log of k1 = %q %v, want its platform id s1", id, ok)
		}
		if r.out.pending() != 0 {
			t.Error("the repeat was not acknowledged")
		}
	})
}

func TestTemporaryErrorsAreRetriedThenGivenUpAndNoted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ad *failingAdapter
		r := newRig(t, func(o *Options) {
			ad = &failingAdapter{fakeAdapter: o.Adapter.(*fakeAdapter), err: &SendError{Temporary: true, Msg: "timeout"}}
			o.Adapter = ad
		})
		defer r.stop()
		r.out.push("t:group:42", "m1", "lost")
		r.out.push("t:private:7", "m2", "next")
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if ad.tries != maxTries {
			t.Errorf("tried %d times, want %d", ad.tries, maxTries)
		}
		_, _, notes := r.agent.snapshot()
		if len(notes) != 1 || !strings.HasPrefix(notes[0], "t:group:42: ") || !strings.Contains(notes[0], "gave up after 6 tries: timeout") {
			t.Errorf("notes = %q", notes)
		}
		if len(r.out.dropped) != 1 || !router.IsPermanent(r.out.dropped[0]) {
			t.Errorf("dropped = %v, want the packet given up as permanent", r.out.dropped)
		}
		if got := r.ad.sentSoFar(); !slices.Equal(got, []string{"t:private:7 next"}) {
			t.Errorf("sent %q: the next packet goes once the first is given up", got)
		}
	})
}

// failingAdapter fails its first maxTries sends with err.
type failingAdapter struct {
	*fakeAdapter
	err   error
	tries int
}

func (f *failingAdapter) Send(ctx context.Context, c Chat, m Outgoing) (string, error) {
	if f.tries < maxTries {
		f.tries++
		return "", f.err
	}
	return f.fakeAdapter.Send(ctx, c, m)
}

func TestSpeechAndForeignChannelsAreAcknowledgedUnsent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		r.out.pushPacket(router.Packet{Key: "a/speech", Channel: "t:group:42", Kind: router.KindSpeech, Text: "spoken"})
		r.out.pushPacket(router.Packet{Key: "b", Channel: "t:channel:9", Kind: router.KindReply, Text: "no such chat kind"})
		r.out.pushPacket(router.Packet{Key: "c", Channel: "t:group:42", Kind: router.KindProactive, Text: "a plan is due", Proactive: true})
		synctest.Wait()
		if got := r.ad.sentSoFar(); !slices.Equal(got, []string{"t:group:42 a plan is due"}) {
			t.Errorf("sent %q", got)
		}
		if r.out.pending() != 0 || len(r.out.dropped) != 0 {
			t.Errorf("pending %d, dropped %v", r.out.pending(), r.out.dropped)
		}
	})
}

func TestStateChangesGoOnTheJournal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j, err := journal.Open(journal.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		r := newRig(t, func(o *Options) { o.Journal = j })
		r.sink.Disconnected(errors.New("connection reset"))
		r.sink.Problem(errors.New("connection refused"))
		r.sink.Problem(errors.New("connection refused")) // the same: not again
		r.sink.Connected(r.ad.self)
		r.stop()
		evs, err := j.Since(0, journal.Filter{Kinds: []journal.Kind{journal.BridgeState}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			var st journal.State
			if err := e.Decode(&st); err != nil || st.Name != "t" || e.Origin != "bridge:t" {
				t.Errorf("event %+v: %v", e, err)
			}
			got = append(got, st.State+" "+st.Error)
		}
		want := []string{"connecting ", "connected ", "disconnected connection reset", "connected ", "stopped "}
		if !slices.Equal(got, want) {
			t.Errorf("states = %q, want %q (a problem within a minute of the same state is not posted)", got, want)
		}
	})
}

func TestRunReturnsTheRoutersErrorAndAPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := newMemRouter()
		out.fail = errors.New("router: read the outbox of bridge:t: disk on fire")
		b, err := New(Options{Name: "t", Adapter: newFakeAdapter(), Agent: &fakeAgent{}, Attach: out.attach, Manners: testManners()})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Errorf("Run = %v, want the router's error", err)
		}
		b, _ = New(Options{Name: "t", Adapter: newFakeAdapter(), Agent: &fakeAgent{}, Manners: testManners(),
			Attach: func(context.Context, router.Component) error { panic("boom") }})
		if err := b.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "panicked: boom") {
			t.Errorf("Run = %v, want the panic as an error", err)
		}
	})
}

// TestTheRoutersOutboxAcrossARestart runs the bridge on the real router
// and store: replies published while the platform is away wait in the
// outbox, survive the store being closed and opened again, and are sent
// once, in order, when the platform is back; a packet whose send was
// logged before the stop is not sent again.
func TestTheRoutersOutboxAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	open := func() (*store.Store, *router.Router) {
		st := openStoreIn(t, dir)
		rt, err := router.Open(router.Options{DB: st.DB(), Prefix: store.PrefixRouter, Retry: backoff.Policy{Base: time.Millisecond, Max: 10 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		return st, rt
	}
	run := func(st *store.Store, rt *router.Router, ad *fakeAdapter) (*Bridge, func()) {
		sent, err := NewStoreSent(st, "t")
		if err != nil {
			t.Fatal(err)
		}
		b, err := New(Options{Name: "t", Adapter: ad, Agent: &fakeAgent{}, Sent: sent, Manners: testManners(),
			Attach: func(ctx context.Context, c router.Component) error { return rt.Attach(ctx, "bridge:t", c) }})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- b.Run(ctx) }()
		return b, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	}
	st, rt := open()
	if err := rt.Subscribe("bridge:t", []string{"t:*"}); err != nil {
		t.Fatal(err)
	}
	ad := newFakeAdapter()
	ad.notify = make(chan string, 16)
	_, stop := run(st, rt, ad)
	sink := <-ad.sink // never connected: the platform is away
	_ = sink
	for i, text := range []string{"one", "two", "three"} {
		if _, err := rt.Publish(router.Packet{Key: fmt.Sprint("k", i), Channel: "t:group:1", Kind: router.KindReply, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rt.Publish(router.Packet{Key: "other", Channel: "u:group:1", Kind: router.KindReply, Text: "another bridge's"}); err != nil {
		t.Fatal(err)
	}
	stop()
	// "one" was sent just before the stop, but not acknowledged
	sent, _ := NewStoreSent(st, "t")
	if err := sent.MarkSent("k0", "s0"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if len(ad.sentSoFar()) != 0 {
		t.Fatalf("sent while away: %q", ad.sentSoFar())
	}

	st, rt = open()
	defer st.Close()
	if s := rt.Status(); len(s) != 1 || s[0].Pending != 3 {
		t.Fatalf("after the restart the outbox holds %+v, want the three packets", s)
	}
	ad2 := newFakeAdapter()
	ad2.notify = make(chan string, 16)
	b, stop := run(st, rt, ad2)
	defer stop()
	(<-ad2.sink).Connected(ad2.self)
	for _, want := range []string{"t:group:1 two", "t:group:1 three"} {
		select {
		case got := <-ad2.notify:
			if got != want {
				t.Fatalf("sent %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q was not sent", want)
		}
	}
	waitFor(t, func() bool { return rt.Status()[0].Pending == 0 })
	if got := ad2.sentSoFar(); len(got) != 2 {
		t.Errorf("sent %q, want two and three once", got)
	}
	if s := b.Status(); s.Sent != 2 || s.Failed != 0 {
		t.Errorf("status %+v", s)
	}
}

// waitFor polls cond (a router acknowledges after Deliver returns).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
