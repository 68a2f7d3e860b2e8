package bridge

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cyan-agent/cyan/router"
)

// scriptAdapter answers its sends with errs in order (nil: the fake
// adapter sends), counting the tries.
type scriptAdapter struct {
	*fakeAdapter
	errs  []error
	tries int
	// refuseReplies refuses every message with a reply part.
	refuseReplies bool
	targets       []string
}

func (s *scriptAdapter) Send(ctx context.Context, c Chat, m Outgoing) (string, error) {
	s.fakeAdapter.mu.Lock()
	s.tries++
	s.targets = append(s.targets, c.ID)
	var err error
	if len(s.errs) > 0 {
		err, s.errs = s.errs[0], s.errs[1:]
	}
	refuse := s.refuseReplies
	s.fakeAdapter.mu.Unlock()
	if err != nil {
		return "", err
	}
	if refuse {
		for _, p := range m.Parts {
			if p.Kind == PartReply {
				return "", &SendError{ReplyRefused: true, Msg: "retcode 200"}
			}
		}
	}
	return s.fakeAdapter.Send(ctx, c, m)
}

func (s *scriptAdapter) count() int {
	s.fakeAdapter.mu.Lock()
	defer s.fakeAdapter.mu.Unlock()
	return s.tries
}

func (s *scriptAdapter) sentTo() []string {
	s.fakeAdapter.mu.Lock()
	defer s.fakeAdapter.mu.Unlock()
	return append([]string(nil), s.targets...)
}

func scripted(errs ...error) (*scriptAdapter, func(*Options)) {
	s := &scriptAdapter{errs: errs}
	return s, func(o *Options) {
		s.fakeAdapter = o.Adapter.(*fakeAdapter)
		o.Adapter = s
	}
}

// A mute the bot learns of (a group_ban notice) holds the chat's answers:
// nothing is sent until it ends by itself, then the answer goes.
func TestAMuteWithAnEndHoldsTheChatUntilItEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		r.sink.(ChatEvents).Muted(grp, time.Now().Add(10*time.Minute))
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:group:42", Kind: router.KindReply, Text: "held", Time: time.Now()})
		time.Sleep(9 * time.Minute)
		synctest.Wait()
		if got := r.ad.sentSoFar(); len(got) != 0 || r.b.Status().Muted != 1 {
			t.Fatalf("sent %q while muted (status %+v)", got, r.b.Status())
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if got := r.ad.sentSoFar(); !slices.Equal(got, []string{"t:group:42 held"}) || r.b.Status().Muted != 0 {
			t.Errorf("sent %q after the mute (status %+v)", got, r.b.Status())
		}
	})
}

// A mute the bot learns of only from a refused send (Telegram: "not
// enough rights"; no known end) is tried again after a minute, then two,
// four…; an answer held for MuteHoldMax is given up, listed with why, and
// the model told; a lift_ban sends the held answers at once.
func TestAMuteWithoutAnEndIsProbedSlowlyThenGivenUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		muted := &SendError{Muted: true, Msg: "Bad Request: not enough rights to send text messages to the chat"}
		var errs []error
		for range 20 {
			errs = append(errs, muted)
		}
		ad, tweak := scripted(errs...)
		r := newRig(t, tweak)
		defer r.stop()
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:group:42", Kind: router.KindReply, Text: "held", Time: time.Now()})
		synctest.Wait()
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if ad.count() != 1 {
			t.Fatalf("%d tries in the first minute, want 1", ad.count())
		}
		time.Sleep(2 * time.Second) // 1 min: the second
		synctest.Wait()
		time.Sleep(2*time.Minute + time.Second) // +2 min: the third
		synctest.Wait()
		if ad.count() != 3 {
			t.Fatalf("%d tries after 3 minutes, want 3 (waits doubling)", ad.count())
		}
		time.Sleep(MuteHoldMax)
		synctest.Wait()
		if ad.count() > 3+6 {
			t.Errorf("%d tries in an hour: the waits double to %s", ad.count(), muteProbeMax)
		}
		st := r.b.Status()
		if st.Failed != 1 || len(st.Undelivered) != 1 || !strings.Contains(st.Undelivered[0].Reason, "may not write") || st.Undelivered[0].Outcome != OutcomeNotDelivered {
			t.Errorf("status %+v: given up after the hold, with why", st)
		}
		if _, _, notes := r.agent.snapshot(); len(notes) != 1 || !strings.Contains(notes[0], "may not write in this chat") {
			t.Errorf("notes %q", notes)
		}
		// a later answer goes at once when the mute is lifted
		r.out.pushPacket(router.Packet{Key: "k2", Channel: "t:group:42", Kind: router.KindReply, Text: "after", Time: time.Now()})
		synctest.Wait()
		ad.fakeAdapter.mu.Lock()
		ad.errs = nil
		ad.fakeAdapter.mu.Unlock()
		r.sink.(ChatEvents).Unmuted(grp)
		synctest.Wait()
		if got := r.ad.sentSoFar(); !slices.Equal(got, []string{"t:group:42 after"}) {
			t.Errorf("sent %q after the lift", got)
		}
	})
}

// A send the platform took and never confirmed is not sent again, now or
// after a restart; the status says its outcome is unknown and the model is
// told it may not have arrived.
func TestAnUnconfirmedSendIsNeverSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad, tweak := scripted(&SendError{Unknown: true, Msg: "sendMessage: context deadline exceeded"})
		r := newRig(t, tweak)
		defer r.stop()
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:group:42", Kind: router.KindReply, Text: "maybe"})
		synctest.Wait()
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:group:42", Kind: router.KindReply, Text: "maybe"}) // offered again
		time.Sleep(time.Minute)
		synctest.Wait()
		if ad.count() != 1 {
			t.Errorf("%d tries, want 1", ad.count())
		}
		st := r.b.Status()
		if st.Unknown != 1 || st.Failed != 0 || len(st.Undelivered) != 1 || st.Undelivered[0].Outcome != OutcomeUnknown {
			t.Errorf("status %+v", st)
		}
		if _, _, notes := r.agent.snapshot(); len(notes) != 1 || !strings.Contains(notes[0], "may not have reached") {
			t.Errorf("notes %q", notes)
		}
		if r.out.pending() != 0 || len(r.out.dropped) != 0 {
			t.Errorf("pending %d dropped %v: acknowledged", r.out.pending(), r.out.dropped)
		}
	})
}

// An answer never replies to a made-up id (a poke's), and one whose reply
// the platform refuses goes again without it.
func TestRepliesOnlyToWhatExists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad, tweak := scripted()
		ad.refuseReplies = true
		r := newRig(t, tweak)
		defer r.stop()
		r.agent.mu.Lock()
		r.agent.quotes = map[string]string{"k1": "poke-1-1700000000000", "k2": "77"}
		r.agent.mu.Unlock()
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:group:42", Kind: router.KindReply, Text: "hi poker"})
		r.out.pushPacket(router.Packet{Key: "k2", Channel: "t:group:42", Kind: router.KindReply, Text: "hi you"})
		synctest.Wait()
		if got := r.ad.sentSoFar(); !slices.Equal(got, []string{"t:group:42 hi poker", "t:group:42 hi you"}) || ad.count() != 3 {
			t.Errorf("sent %q in %d tries: want both, without replies (the second refused once)", got, ad.count())
		}
	})
	for id, want := range map[string]bool{"poke-1-17": true, "notice-x": true, "12345": false, "-12345": false, "": false, "Poke-1": false, "abc": false} {
		if SyntheticID(id) != want {
			t.Errorf("SyntheticID(%q) = %v", id, !want)
		}
	}
}

// A chat the platform moved keeps its channel: answers go to the new id
// (the move learned from a refused send, then remembered), messages from
// the new id join the old channel, and the move outlives a restart.
func TestAMovedChatKeepsItsChannel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		moves := &memMoves{}
		ad, tweak := scripted(&SendError{MovedTo: "-100042", Msg: "group chat was upgraded to a supergroup chat"})
		r := newRig(t, func(o *Options) { tweak(o); o.Moves = moves })
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:group:42", Kind: router.KindReply, Text: "in flight"})
		synctest.Wait()
		if !slices.Equal(ad.sentTo(), []string{"42", "-100042"}) {
			t.Errorf("sent to %v, want the old id, then the new", ad.sentTo())
		}
		r.say(Chat{Kind: Group, ID: "-100042"}, alice, text("hello from the supergroup"))
		synctest.Wait()
		stored, _, _ := r.agent.snapshot()
		if len(stored) != 1 || stored[0].Channel != "t:group:42" {
			t.Errorf("stored %+v: the supergroup's message belongs to the group's channel", stored)
		}
		r.stop()
		r2 := newRig(t, func(o *Options) { o.Moves = moves })
		defer r2.stop()
		r2.out.pushPacket(router.Packet{Key: "k2", Channel: "t:group:42", Kind: router.KindReply, Text: "after the restart"})
		synctest.Wait()
		if got := r2.ad.sentSoFar(); !slices.Equal(got, []string{"t:group:-100042 after the restart"}) {
			t.Errorf("sent %q after a restart", got)
		}
	})
}
