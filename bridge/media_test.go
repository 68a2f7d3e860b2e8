package bridge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pushAdapter is the fake platform as OneBot is: it pushes without
// waiting for an acknowledgement.
type pushAdapter struct{ *fakeAdapter }

func (pushAdapter) PushesWithoutAck() bool { return true }

// noticeAgent adds the optional Recaller and Quoter to the fake agent.
type noticeAgent struct {
	*fakeAgent
	qmu     sync.Mutex
	quotes  map[string]Quote // channel/platform id → the message
	recalls []string
}

func (a *noticeAgent) Recall(_ context.Context, channel, id string) error {
	a.fakeAgent.mu.Lock()
	known := a.fakeAgent.ext[channel+"/"+id]
	a.fakeAgent.mu.Unlock()
	if !known {
		return ErrNotStored
	}
	a.qmu.Lock()
	defer a.qmu.Unlock()
	a.recalls = append(a.recalls, channel+"/"+id)
	return nil
}

func (a *noticeAgent) Quote(channel, id string) (Quote, bool) {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	q, ok := a.quotes[channel+"/"+id]
	return q, ok
}

func pushRig(t *testing.T, dir string, tweak func(*Options)) (*rig, *noticeAgent) {
	var na *noticeAgent
	r := newRig(t, func(o *Options) {
		o.Adapter = pushAdapter{o.Adapter.(*fakeAdapter)}
		na = &noticeAgent{fakeAgent: o.Agent.(*fakeAgent), quotes: map[string]Quote{}}
		o.Agent = na
		o.DataDir = dir
		if tweak != nil {
			tweak(o)
		}
	})
	return r, na
}

// stalled is an image whose download never ends (until its context does).
func stalled() *Media {
	return &Media{Name: "big.jpg", URL: "http://stalls/", Fetch: func(ctx context.Context, _ int64) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
}

func pngAfter(d time.Duration) *Media {
	return &Media{Name: "a.png", Fetch: func(ctx context.Context, _ int64) ([]byte, error) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return append([]byte("\x89PNG\r\n\x1a\n"), []byte(d.String())...), nil
	}}
}

// A group message whose three images never download holds up nothing
// else: the owner's private message is stored and answered at once, a
// later message of the same group is stored at once too; the stalled one
// is stored when its budget runs out, its images named as not downloaded,
// and the group's turn waits for it.
func TestStalledMediaHoldsUpNoOtherMessage(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		r, _ := pushRig(t, dir, nil)
		defer r.stop()
		start := time.Now()
		r.say(grp, alice, mention("100"), text(" what are these?"), Part{Kind: PartImage, Media: stalled()},
			Part{Kind: PartImage, Media: stalled()}, Part{Kind: PartImage, Media: stalled()})
		r.say(Chat{Kind: Private, ID: owner.ID}, owner, text("are you there?"))
		r.say(grp, bob, text("after the pictures"))
		synctest.Wait()
		stored, _, _ := r.agent.snapshot()
		if len(stored) != 2 || stored[0].Text != "are you there?" || stored[1].Text != "after the pictures" {
			t.Fatalf("stored while the images load: %+v", stored)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		_, turns, _ := r.agent.snapshot()
		if len(turns) != 1 || turns[0].Channel != "t:private:9" {
			t.Fatalf("the owner's turn did not run at its normal time (debounce 2 s): %+v", turns)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		stored, turns, _ = r.agent.snapshot()
		if len(stored) != 3 {
			t.Fatalf("the stalled message was never stored: %+v", stored)
		}
		want := "@cyan what are these? [image big.jpg: not downloaded: still loading after 10s] [image big.jpg: not downloaded: still loading after 10s] [image big.jpg: not downloaded: still loading after 10s]"
		if stored[2].Text != want {
			t.Errorf("stored %q\nwant   %q", stored[2].Text, want)
		}
		if len(turns) != 2 || turns[1].Channel != "t:group:42" || turns[1].MessageID != "m3" {
			t.Fatalf("the group's turn: %+v", turns)
		}
		_ = start
	})
}

// The images of one message are fetched at once: three that take 3 s each
// are all in after 3 s, not 9.
func TestImagesOfAMessageAreFetchedInParallel(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		r, _ := pushRig(t, dir, nil)
		defer r.stop()
		start := time.Now()
		var at time.Time
		r.b.stored = func(Chat, string) { at = time.Now() }
		r.say(grp, alice, Part{Kind: PartImage, Media: pngAfter(3 * time.Second)}, Part{Kind: PartImage, Media: pngAfter(3*time.Second + 1)},
			Part{Kind: PartImage, Media: pngAfter(3*time.Second + 2)})
		time.Sleep(time.Minute)
		synctest.Wait()
		stored, _, _ := r.agent.snapshot()
		if len(stored) != 1 || strings.Count(stored[0].Text, "%[images/t/") != 3 {
			t.Fatalf("stored %+v", stored)
		}
		if took := at.Sub(start); took > 4*time.Second {
			t.Errorf("three 3 s downloads took %s together", took)
		}
	})
}

// An incoming message over 256 KB is cut, with a note, never refused.
func TestOversizedInboundIsCutWithANote(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		r.say(grp, alice, text(strings.Repeat("长", 120_000))) // 360,000 bytes
		synctest.Wait()
		stored, _, _ := r.agent.snapshot()
		if len(stored) != 1 {
			t.Fatalf("stored %d", len(stored))
		}
		got := stored[0].Text
		if len(got) > MaxInboundBytes || !strings.HasSuffix(got, "[… cut: the message was 360000 bytes; only the first 261942 are kept]") || !strings.HasPrefix(got, "长长") {
			t.Errorf("stored %d bytes ending %q", len(got), got[len(got)-120:])
		}
	})
}

// A reply that names only the message it answers (OneBot) reaches the
// model as that message's line: "^name [time]: text", cut.
func TestAQuotedMessageIsRenderedAsItsLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, na := pushRig(t, "", nil)
		defer r.stop()
		at := time.Date(2026, 11, 25, 9, 30, 0, 0, time.Local)
		na.quotes["t:group:42/77"] = Quote{User: "bob", Time: at, Text: "shall we meet at the station at nine, or is that too early for everyone " + strings.Repeat("really ", 20)}
		r.say(grp, alice, Part{Kind: PartReply, MessageID: "77"}, text("nine is fine"))
		r.say(grp, alice, Part{Kind: PartReply, MessageID: "78"}, text("which one?"))
		synctest.Wait()
		stored, _, _ := r.agent.snapshot()
		want := "[reply to ^bob [2026-11-25 09:30]: shall we meet at the station at nine, or is that too early for everyone really r…] nine is fine"
		if stored[0].Text != want {
			t.Errorf("stored %q\nwant   %q", stored[0].Text, want)
		}
		if stored[1].Text != "[reply to an earlier message] which one?" {
			t.Errorf("an unknown quote: %q", stored[1].Text)
		}
	})
}

// A recall reaches the agent's Recaller; one that comes while the message
// still loads its media is applied once it is stored. A poke of the bot
// asks for a turn, except in a group manners.ignore_pokes names.
func TestRecallsAndPokes(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		r, na := pushRig(t, dir, func(o *Options) { o.Manners.IgnorePokes = []string{"43"} })
		defer r.stop()
		n := r.sink.(Noticer)
		id := r.say(grp, alice, text("oops, wrong chat"))
		slow := r.say(grp, bob, text("my password is hunter2"), Part{Kind: PartImage, Media: pngAfter(2 * time.Second)})
		synctest.Wait()
		n.Recalled(context.Background(), grp, id)
		n.Recalled(context.Background(), grp, slow) // still loading
		n.Recalled(context.Background(), grp, "nope")
		time.Sleep(10 * time.Second)
		synctest.Wait()
		na.qmu.Lock()
		got := fmt.Sprint(na.recalls)
		na.qmu.Unlock()
		if got != fmt.Sprintf("[t:group:42/%s t:group:42/%s]", id, slow) {
			t.Errorf("recalls %s", got)
		}

		n.Poked(context.Background(), grp, alice, time.Now())
		n.Poked(context.Background(), Chat{Kind: Group, ID: "43"}, bob, time.Now())
		n.Poked(context.Background(), Chat{Kind: Private, ID: "5"}, User{ID: "5", Name: "eve"}, time.Now())
		time.Sleep(time.Minute)
		synctest.Wait()
		stored, turns, _ := r.agent.snapshot()
		var pokes []string
		for _, s := range stored {
			if strings.HasPrefix(s.Text, "[poke") {
				pokes = append(pokes, s.Channel+" "+s.Text)
			}
		}
		if fmt.Sprint(pokes) != "[t:group:42 [poke: alice poked cyan] t:group:43 [poke: bob poked cyan] t:private:5 [poke: eve poked cyan]]" {
			t.Errorf("pokes stored: %q", pokes)
		}
		var chans []string
		for _, tr := range turns {
			chans = append(chans, tr.Channel)
		}
		slices.Sort(chans) // two chats: their turns run in either order
		if fmt.Sprint(chans) != "[t:group:42 t:private:5]" {
			t.Errorf("turns for pokes in %v, want the group not ignoring them and the private chat", chans)
		}
	})
}
