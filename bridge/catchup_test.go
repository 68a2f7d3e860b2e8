package bridge

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// keptAgent is the fake agent with the chats it kept (Kept).
type keptAgent struct {
	*fakeAgent
	marks []ChatMark
}

func (k *keptAgent) Kept(string, time.Time) ([]ChatMark, error) { return k.marks, nil }

// catchingAdapter is the fake platform with what each chat said while the
// bridge was away (CatchUp).
type catchingAdapter struct {
	*fakeAdapter
	mu     sync.Mutex
	missed map[string][]*Message // channel → messages after the mark
	asked  []string              // "channel after"
}

func (c *catchingAdapter) askedSoFar() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.asked...)
}

func (c *catchingAdapter) Missed(_ context.Context, chat Chat, after string, _ time.Time) ([]*Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := chat.Channel("t")
	c.asked = append(c.asked, ch+" "+after)
	var out []*Message
	for _, m := range c.missed[ch] {
		cp := *m
		out = append(out, &cp)
	}
	return out, nil
}

// TestWhatAChatSaidWhileAwayIsKeptAndItsLastQuestionAnswered: after a
// connection the bridge asks for what each kept chat said after its
// newest kept message, stores it in its own time and starts no turn for
// it — but for the newest message that addressed the bot, when it is
// recent; an old one stays unanswered, and a "/command" in it is not run.
// A second connection, or the account back online, finds them stored
// already.
func TestWhatAChatSaidWhileAwayIsKeptAndItsLastQuestionAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Now()
		g, old := Chat{Kind: Group, ID: "42"}, Chat{Kind: Group, ID: "43"}
		amy, ben := User{ID: "7", Name: "amy"}, User{ID: "8", Name: "ben"}
		bot := Part{Kind: PartMention, UserID: "100"}
		ag := &keptAgent{fakeAgent: &fakeAgent{owners: map[string]bool{}},
			marks: []ChatMark{{Channel: "t:group:42", ExternalID: "m1", Time: now.Add(-time.Hour)}, {Channel: "t:group:43", ExternalID: "o1", Time: now.Add(-48 * time.Hour)}}}
		var ca *catchingAdapter
		r := newRig(t, func(o *Options) {
			o.Agent = ag
			o.ResumeMaxAge = 30 * time.Minute
			ca = &catchingAdapter{fakeAdapter: o.Adapter.(*fakeAdapter), missed: map[string][]*Message{
				"t:group:42": {
					{Chat: g, From: amy, ID: "m2", Time: now.Add(-20 * time.Minute), Parts: []Part{bot, text(" are you there?")}},
					{Chat: g, From: ben, ID: "m3", Time: now.Add(-10 * time.Minute), Parts: []Part{text("/reset")}},
					{Chat: g, From: User{ID: "100", Name: "bot"}, ID: "m4", Time: now.Add(-9 * time.Minute), Parts: []Part{text("my own")}},
					{Chat: g, From: amy, ID: "m5", Time: now.Add(-5 * time.Minute), Parts: []Part{bot, text(" hello?")}},
				},
				"t:group:43": {
					{Chat: old, From: ben, ID: "o2", Time: now.Add(-40 * time.Hour), Parts: []Part{bot, text(" yesterday's question")}},
				},
			}}
			o.Adapter = ca
		})
		defer r.stop()
		time.Sleep(time.Minute) // debounce and the turn
		synctest.Wait()
		stored, turns, _ := ag.snapshot()
		var got []string
		for _, in := range stored {
			got = append(got, in.ExternalID+"@"+in.Time.Sub(now).String())
		}
		want := []string{"m2@-20m0s", "m3@-10m0s", "m5@-5m0s", "o2@-40h0m0s"}
		if len(got) != len(want) {
			t.Fatalf("stored %q, want %q", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("stored %q, want %q", got, want)
				break
			}
		}
		if len(turns) != 1 || turns[0].Channel != "t:group:42" || turns[0].MessageID != "m3" {
			t.Errorf("turns %+v, want one in t:group:42 for the newest question (m5, stored as m3)", turns)
		}
		if asked := ca.askedSoFar(); len(asked) != 2 || asked[0] != "t:group:42 m1" || asked[1] != "t:group:43 o1" {
			t.Errorf("asked %q, want each chat after its newest kept message", asked)
		}
		if len(r.ad.sentSoFar()) != 0 {
			t.Errorf("sent %q: the /command said while away was run", r.ad.sentSoFar())
		}
		// a connection told again (the bot's name learnt) asks nothing
		r.sink.Connected(r.ad.self)
		synctest.Wait()
		if n := len(ca.askedSoFar()); n != 2 {
			t.Errorf("asked %d times after the same connection was told again, want 2", n)
		}
		// a new connection: asked again at once, nothing stored twice, no
		// turn; one more soon after is caught up on once catchUpEvery has
		// passed since the last began
		r.sink.Disconnected(errors.New("connection reset"))
		r.sink.Connected(r.ad.self)
		synctest.Wait()
		r.sink.Disconnected(errors.New("connection reset"))
		r.sink.Connected(r.ad.self)
		r.sink.Disconnected(errors.New("connection reset"))
		r.sink.Connected(r.ad.self)
		synctest.Wait()
		if n := len(ca.askedSoFar()); n != 4 {
			t.Errorf("asked %d times right after a flapping connection, want 4: the next catch-up waits", n)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		stored, turns, _ = ag.snapshot()
		if len(stored) != 4 || len(turns) != 1 {
			t.Errorf("after a second connection: %d stored, %d turns; want 4 and 1", len(stored), len(turns))
		}
		if n := len(ca.askedSoFar()); n != 6 {
			t.Errorf("asked %d times, want 6: once more for the two connections that followed", n)
		}
		// the account logged out and back in: QQ kept what was said
		// meanwhile, the implementation never heard it
		w := r.sink.(AccountWatcher)
		w.AccountOffline("kicked")
		w.AccountOnline()
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(ca.askedSoFar()); n != 8 {
			t.Errorf("asked %d times after the account came back, want 8", n)
		}
	})
}

// panickyCatchUp panics at its first catch-up.
type panickyCatchUp struct {
	*catchingAdapter
	once sync.Once
}

func (p *panickyCatchUp) Missed(ctx context.Context, chat Chat, after string, at time.Time) ([]*Message, error) {
	p.once.Do(func() { panic("the adapter failed") })
	return p.catchingAdapter.Missed(ctx, chat, after, at)
}

// TestACatchUpThatPanicsLeavesTheNextToRun: a catch-up the adapter makes
// panic is logged, and the next connection catches up all the same.
func TestACatchUpThatPanicsLeavesTheNextToRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ag := &keptAgent{fakeAgent: &fakeAgent{owners: map[string]bool{}},
			marks: []ChatMark{{Channel: "t:group:42", ExternalID: "m1", Time: time.Now().Add(-time.Hour)}}}
		var ca *catchingAdapter
		r := newRig(t, func(o *Options) {
			o.Agent = ag
			ca = &catchingAdapter{fakeAdapter: o.Adapter.(*fakeAdapter), missed: map[string][]*Message{
				"t:group:42": {{Chat: Chat{Kind: Group, ID: "42"}, From: User{ID: "7", Name: "amy"}, ID: "m2", Time: time.Now(), Parts: []Part{text("hi")}}},
			}}
			o.Adapter = &panickyCatchUp{catchingAdapter: ca}
		})
		defer r.stop()
		synctest.Wait()
		r.sink.Disconnected(errors.New("connection reset"))
		r.sink.Connected(r.ad.self)
		time.Sleep(time.Minute)
		synctest.Wait()
		if stored, _, _ := ag.snapshot(); len(stored) != 1 || len(ca.askedSoFar()) != 1 {
			t.Errorf("after the panic and a new connection: %d stored, asked %d times; want 1 and 1", len(stored), len(ca.askedSoFar()))
		}
	})
}
