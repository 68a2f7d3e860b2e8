package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/store"
)

// flightSent is the in-memory sent log with Flights, as StoreSent keeps
// them across a restart (TestStoreSentKeepsFlightsAcrossARestart).
type flightSent struct {
	*memSent
	mu    sync.Mutex
	begun map[string]time.Time
}

func newFlightSent() *flightSent {
	return &flightSent{memSent: newMemSent(16), begun: map[string]time.Time{}}
}

func (f *flightSent) Begin(key string, at time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.begun[key] = at
	return nil
}

func (f *flightSent) Begun(key string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.begun[key]
	return at, ok
}

func (f *flightSent) End(key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.begun, key)
	return nil
}

func (f *flightSent) MarkSent(key, id string) error { return f.MarkSentIn("", key, id) }

func (f *flightSent) MarkSentIn(channel, key, id string) error {
	_ = f.End(key)
	return f.memSent.MarkSentIn(channel, key, id)
}

func (f *flightSent) flying() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.begun)
}

// findingAdapter is the fake platform with a chat it can search (Finder):
// in says whether the message sought is there.
type findingAdapter struct {
	*fakeAdapter
	in    bool
	err   error
	asked []time.Time
}

func (f *findingAdapter) FindSent(_ context.Context, _ Chat, _ Outgoing, since time.Time) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, since)
	if err := f.err; err != nil {
		f.err = nil // once
		return "", false, err
	}
	return "p7", f.in, nil
}

// cutSend runs a bridge over sent whose platform can search its chats
// (finder: the message sought is there when in; the first search fails
// with err) or not, and whose first send fails with fail; it offers the
// packet "cut" under k1 and checks that what the platform got is sent.
// The caller stops the rig.
func cutSend(t *testing.T, sent *flightSent, finder, in bool, err, fail error, want []string) (*rig, *findingAdapter) {
	t.Helper()
	var fa *findingAdapter
	r := newRig(t, func(o *Options) {
		o.Sent = sent
		ad := o.Adapter.(*fakeAdapter)
		ad.fail = fail
		if finder {
			fa = &findingAdapter{fakeAdapter: ad, in: in, err: err}
			o.Adapter = fa
		}
	})
	r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:group:42", Kind: router.KindReply, Text: "cut"})
	time.Sleep(time.Minute) // the router's backoff
	synctest.Wait()
	if got := r.ad.sentSoFar(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", got, want)
	}
	return r, fa
}

// TestASendACrashCutIsLookedForBeforeItIsSentAgain: the daemon died after
// writing a message to the platform and before its answer, leaving the
// send's flight; offered again after the restart, the message is looked
// for in the chat where the platform can be searched — found, it is not
// sent again; not there, it is sent once — and where it cannot, or the
// search fails, its outcome is unknown: not sent again, the model told.
func TestASendACrashCutIsLookedForBeforeItIsSentAgain(t *testing.T) {
	began := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name      string
		finder    bool
		in        bool
		err       error
		sent      []string
		id        string // the sent log's id of the key
		unknown   uint64
		noteHas   string
		lookedFor bool
		asks      int // times looked for, when not once
	}{
		{name: "in the chat", finder: true, in: true, id: "p7", lookedFor: true},
		{name: "not in the chat", finder: true, sent: []string{"t:group:42 cut"}, id: "s1", lookedFor: true},
		{name: "the search fails", finder: true, err: errors.New("get_group_msg_history: retcode 1200"), unknown: 1, noteHas: "could not be searched", lookedFor: true},
		{name: "a platform that cannot be searched", unknown: 1, noteHas: "fake cannot be asked whether it arrived"},
		{name: "the connection goes while looking", finder: true, in: true, err: ErrOffline, id: "p7", lookedFor: true, asks: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sent := newFlightSent()
				_ = sent.Begin("k1", began) // the crash
				r, fa := cutSend(t, sent, c.finder, c.in, c.err, nil, c.sent)
				defer r.stop()
				if id, ok := sent.Sent("k1"); !ok || id != c.id {
					t.Errorf("the sent log's k1 = %q %v, want %q", id, ok, c.id)
				}
				if n := sent.flying(); n != 0 {
					t.Errorf("%d flights left", n)
				}
				if r.out.pending() != 0 {
					t.Error("the packet was not acknowledged")
				}
				st := r.b.Status()
				if st.Unknown != c.unknown {
					t.Errorf("status: %d unknown, want %d", st.Unknown, c.unknown)
				}
				_, _, notes := r.agent.snapshot()
				if c.noteHas == "" && len(notes) != 0 || c.noteHas != "" && (len(notes) != 1 || !strings.Contains(notes[0], c.noteHas)) {
					t.Errorf("notes %q, want one with %q", notes, c.noteHas)
				}
				asks := max(c.asks, 1)
				if fa != nil && (len(fa.asked) != asks || !fa.asked[0].Equal(began)) {
					t.Errorf("looked for since %v, want %d times since %v", fa.asked, asks, began)
				}
			})
		})
	}
}

// TestASendThatCouldNotBeLookedForIsLookedForOverTheNextConnection: a
// send the platform never confirmed, and that the adapter could not look
// for for lack of a connection, is not settled as unknown where the chat
// can be searched: its flight stays, and the packet's next offer looks
// for it — found, delivered; not there, sent once. Where the chat cannot
// be searched, it is unknown at once.
func TestASendThatCouldNotBeLookedForIsLookedForOverTheNextConnection(t *testing.T) {
	for _, c := range []struct {
		name      string
		finder    bool
		in        bool
		sent      []string
		unknown   uint64
		lookedFor int
	}{
		{name: "in the chat", finder: true, in: true, lookedFor: 1},
		{name: "not in the chat", finder: true, sent: []string{"t:group:42 cut"}, lookedFor: 1},
		{name: "a platform that cannot be searched", unknown: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sent := newFlightSent()
				unlooked := &SendError{Unknown: true, Unlooked: true, Msg: "send_group_msg: no answer; no connection to look for it in the chat"}
				r, fa := cutSend(t, sent, c.finder, c.in, nil, unlooked, c.sent)
				defer r.stop()
				if st := r.b.Status(); st.Unknown != c.unknown || st.Failed != 0 {
					t.Errorf("status: %d unknown, %d failed, want %d and 0", st.Unknown, st.Failed, c.unknown)
				}
				if fa != nil && len(fa.asked) != c.lookedFor {
					t.Errorf("looked for it %d times, want %d", len(fa.asked), c.lookedFor)
				}
				if sent.flying() != 0 || r.out.pending() != 0 {
					t.Errorf("%d flights and %d packets left", sent.flying(), r.out.pending())
				}
			})
		})
	}
}

// TestAFlightLastsOnlyWhileItsOutcomeIsUnknown: a send records its flight
// before it goes and ends it with its outcome — sent, refused or unknown
// — so only a crash leaves one, and a message nothing cut is never looked
// for.
func TestAFlightLastsOnlyWhileItsOutcomeIsUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := newFlightSent()
		var fa *findingAdapter
		var during []int
		r := newRig(t, func(o *Options) {
			o.Sent = sent
			fa = &findingAdapter{fakeAdapter: o.Adapter.(*fakeAdapter)}
			o.Adapter = &flightWatcher{findingAdapter: fa, sent: sent, during: &during}
		})
		defer r.stop()
		r.out.pushPacket(router.Packet{Key: "ok", Channel: "t:group:42", Kind: router.KindReply, Text: "sent"})
		synctest.Wait()
		fa.fakeAdapter.mu.Lock()
		fa.fakeAdapter.fail = &SendError{Msg: "the chat is gone"}
		fa.fakeAdapter.mu.Unlock()
		r.out.pushPacket(router.Packet{Key: "refused", Channel: "t:group:42", Kind: router.KindReply, Text: "refused"})
		synctest.Wait()
		fa.fakeAdapter.mu.Lock()
		fa.fakeAdapter.fail = &SendError{Unknown: true, Msg: "no answer"}
		fa.fakeAdapter.mu.Unlock()
		r.out.pushPacket(router.Packet{Key: "unknown", Channel: "t:group:42", Kind: router.KindReply, Text: "unknown"})
		synctest.Wait()
		if len(during) != 3 || during[0] != 1 || during[1] != 1 || during[2] != 1 {
			t.Errorf("flights during each send %v, want one each", during)
		}
		if n := sent.flying(); n != 0 {
			t.Errorf("%d flights left after the outcomes", n)
		}
		if len(fa.asked) != 0 {
			t.Errorf("looked for %d messages nothing cut", len(fa.asked))
		}
	})
}

// TestAPacketThatWaitedForTheConnectionLeavesNoFlight: a packet offered
// while the platform is away waits for the connection without a flight,
// since nothing went out: a crash then leaves nothing to look for, and
// after the restart it is sent — not looked for, nor, where the chat
// cannot be searched, given up as unknown.
func TestAPacketThatWaitedForTheConnectionLeavesNoFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := newFlightSent()
		r := newRig(t, func(o *Options) { o.Sent = sent })
		r.sink.Disconnected(errors.New("connection reset"))
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:group:42", Kind: router.KindReply, Text: "waits"})
		time.Sleep(time.Hour)
		synctest.Wait()
		// a crash now, while it waits, must leave nothing to look for
		if _, ok := sent.Begun("k1"); ok {
			t.Error("a packet waiting for the connection has a flight")
		}
		r.stop()
		if got := r.ad.sentSoFar(); len(got) != 0 {
			t.Fatalf("sent %q while away", got)
		}
	})
}

// flightWatcher counts the flights while each send is under way.
type flightWatcher struct {
	*findingAdapter
	sent   *flightSent
	during *[]int
}

func (w *flightWatcher) Send(ctx context.Context, c Chat, m Outgoing) (string, error) {
	*w.during = append(*w.during, w.sent.flying())
	return w.findingAdapter.Send(ctx, c, m)
}

// TestStoreSentKeepsFlightsAcrossARestart: StoreSent's flights survive
// the store being closed and opened again, and MarkSent or End forgets
// them.
func TestStoreSentKeepsFlightsAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	st := openStoreIn(t, dir)
	s, err := NewStoreSent(st, "t")
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1764000000123)
	for _, k := range []string{"a", "b", "c"} {
		if err := s.Begin(k, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.MarkSentIn("t:group:1", "a", "9"); err != nil {
		t.Fatal(err)
	}
	if err := s.End("b"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openStoreIn(t, dir)
	defer st.Close()
	s, err = NewStoreSent(st, "t")
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]bool{"a": false, "b": false, "c": true} {
		got, ok := s.Begun(k)
		if ok != want || ok && !got.Equal(at) {
			t.Errorf("Begun(%s) = %v %v, want %v at %v", k, got, ok, want, at)
		}
	}
	other, _ := NewStoreSent(st, "u")
	if _, ok := other.Begun("c"); ok {
		t.Error("another bridge's log sees the flight")
	}
	var _ Flights = s
}

// TestAVoiceACrashCutIsNotSentBlind: in voice mode a voice message whose
// send a crash cut is settled like a text: on a platform that cannot be
// searched its outcome is unknown — kept as sent with no id, counted and
// told to the model, the voice being the answer — and neither the voice
// nor the text goes again.
func TestAVoiceACrashCutIsNotSentBlind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := newFlightSent()
		_ = sent.Begin("k1#voice", time.Now())
		r := voiceRig(t, VoiceOnly, nil, sent)
		defer r.stop()
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:private:7", Kind: router.KindReply, Text: "hi there"})
		synctest.Wait()
		if got := r.ad.sentSoFar(); len(got) != 0 {
			t.Errorf("sent %q after the crash, want nothing", got)
		}
		if id, ok := sent.Sent("k1#voice"); !ok || id != "" {
			t.Errorf("the voice's key = %q %v, want kept as sent, its id unknown", id, ok)
		}
		if st := r.b.Status(); st.Unknown != 1 {
			t.Errorf("status: %d unknown, want 1", st.Unknown)
		}
		if _, _, notes := r.agent.snapshot(); len(notes) != 1 || !strings.Contains(notes[0], "may not have reached this chat") {
			t.Errorf("notes %q, want the model told", notes)
		}
		if sent.flying() != 0 || r.out.pending() != 0 {
			t.Errorf("%d flights and %d packets left", sent.flying(), r.out.pending())
		}
	})
}

// BenchmarkSendBookkeeping is what the sent log costs one send on a real,
// durable store: the key marked sent alone (before flights), and with its
// flight begun first.
func BenchmarkSendBookkeeping(b *testing.B) {
	for _, flights := range []bool{false, true} {
		b.Run(map[bool]string{false: "mark-sent", true: "flight+mark-sent"}[flights], func(b *testing.B) {
			st, err := store.Open(store.Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			s, err := NewStoreSent(st, "t")
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			for i := 0; b.Loop(); i++ {
				key := fmt.Sprint("k", i)
				if flights {
					if err := s.Begin(key, now); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.MarkSentIn("t:group:1", key, fmt.Sprint(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
