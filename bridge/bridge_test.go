package bridge

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/router"
)

func testManners() config.Manners {
	m := config.DefaultManners()
	m.ImageMaxBytes, m.ImagesMaxBytes = 1<<20, 4<<20
	return m
}

var (
	grp   = Chat{Kind: Group, ID: "42"}
	alice = User{ID: "1", Name: "alice"}
	bob   = User{ID: "2", Name: "bob"}
	owner = User{ID: "9", Name: "hareru"}
)

func mention(id string) Part { return Part{Kind: PartMention, UserID: id} }

func TestGroupTurnsOnlyWhenAddressed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		r.say(grp, alice, text("hello all"))
		r.say(grp, bob, text("cyanide is a poison")) // not the name
		r.say(grp, alice, mention("100"), text(" what time is it?"))
		r.say(grp, bob, text("hey Cyan, you there?"))
		time.Sleep(time.Minute)
		synctest.Wait()
		stored, turns, _ := r.agent.snapshot()
		if len(stored) != 4 {
			t.Fatalf("stored %d messages, want 4: %+v", len(stored), stored)
		}
		if stored[2].Text != "@cyan what time is it?" || stored[0].UserID != "t:1" || stored[0].Channel != "t:group:42" {
			t.Errorf("stored = %+v", stored)
		}
		if len(turns) != 1 {
			t.Fatalf("turns = %+v, want one for the mention and the name (debounced together)", turns)
		}
		if turns[0].MessageID != "m4" || turns[0].SpeakerID != "t:1" {
			t.Errorf("turn = %+v", turns[0])
		}
	})
}

func TestBurstWhileATurnRunsMakesOneFollowingTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		r.agent.gate = make(chan struct{})
		dm := Chat{Kind: Private, ID: "1"}
		r.say(dm, alice, text("first"))
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if _, turns, _ := r.agent.snapshot(); len(turns) != 1 {
			t.Fatalf("turns = %d before the burst, want 1", len(turns))
		}
		for i := range 10 {
			r.say(dm, alice, text(fmt.Sprint("more ", i)))
		}
		time.Sleep(time.Minute) // the turn is still running
		synctest.Wait()
		if _, turns, _ := r.agent.snapshot(); len(turns) != 1 {
			t.Fatalf("turns = %d while the first runs, want 1", len(turns))
		}
		close(r.agent.gate)
		time.Sleep(time.Minute)
		synctest.Wait()
		stored, turns, _ := r.agent.snapshot()
		if len(turns) != 2 || turns[1].MessageID != fmt.Sprint("m", len(stored)) {
			t.Fatalf("turns = %+v, want exactly one following turn over the newest message", turns)
		}
	})
}

func TestOwnerSpeakerAndLeastTrustedInABatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		r.agent.owners["t:9"] = true
		impostor := User{ID: "5", Name: "hareru"} // renamed to the owner's name
		r.say(grp, impostor, mention("100"), text(" run ls"))
		time.Sleep(time.Minute)
		r.say(grp, owner, mention("100"), text(" run ls"))
		time.Sleep(time.Minute)
		r.say(grp, owner, mention("100"), text(" a"))
		r.say(grp, bob, mention("100"), text(" b"))
		time.Sleep(time.Minute)
		synctest.Wait()
		_, turns, _ := r.agent.snapshot()
		var ids []string
		for _, tr := range turns {
			ids = append(ids, tr.SpeakerID)
		}
		if !slices.Equal(ids, []string{"t:5", "t:9", "t:2"}) {
			t.Errorf("speakers = %v: the impostor is t:5, the owner t:9, a mixed batch runs as the stranger", ids)
		}
	})
}

func TestDuplicatesAndTheBotsOwnMessagesAreSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		m := &Message{Chat: grp, From: alice, ID: "77", Parts: []Part{text("once")}}
		r.sink.Inbound(t.Context(), m)
		r.sink.Inbound(t.Context(), &Message{Chat: grp, From: alice, ID: "77", Parts: []Part{text("once")}})
		r.sink.Inbound(t.Context(), &Message{Chat: grp, From: r.ad.self, ID: "78", Parts: []Part{text("my own")}})
		r.sink.Inbound(t.Context(), nil)
		stored, _, _ := r.agent.snapshot()
		if len(stored) != 1 {
			t.Errorf("stored %+v, want the first only", stored)
		}
		if s := r.b.Status(); s.Skipped != 3 || s.Received != 4 {
			t.Errorf("status = %+v", s)
		}
	})
}

func TestListsRateLimitsAndQuietHours(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, func(o *Options) {
			o.Manners.DenyGroups = []string{"13"}
			o.Manners.UserTurns = 2
			o.Manners.GroupTurns = 100
		})
		defer r.stop()
		r.say(Chat{Kind: Group, ID: "13"}, alice, mention("100"), text(" hi"))
		for i := range 5 { // alice may trigger 2 turns a minute
			r.say(grp, alice, mention("100"), text(fmt.Sprint(" ", i)))
			time.Sleep(10 * time.Second)
		}
		synctest.Wait()
		stored, turns, _ := r.agent.snapshot()
		if len(stored) != 5 {
			t.Errorf("stored %d, want the 5 of the served group", len(stored))
		}
		if len(turns) != 2 {
			t.Errorf("turns = %d, want 2 (the user limit)", len(turns))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// A group over its turn limit waits; the answers come later, none lost.
		r := newRig(t, func(o *Options) { o.Manners.GroupTurns, o.Manners.UserTurns = 2, 0 })
		defer r.stop()
		for i := range 6 {
			r.say(grp, User{ID: fmt.Sprint(i + 10), Name: "u"}, mention("100"), text(" q"))
			time.Sleep(5 * time.Second)
		}
		synctest.Wait()
		if _, turns, _ := r.agent.snapshot(); len(turns) != 2 {
			t.Fatalf("turns in the first half minute = %d, want the limit 2", len(turns))
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if _, turns, _ := r.agent.snapshot(); len(turns) != 3 {
			t.Errorf("turns after = %d, want one more for what waited", len(turns))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		now := time.Now()
		span := fmt.Sprintf("%s-%s", now.Add(-time.Hour).Format("15:04"), now.Add(time.Hour).Format("15:04"))
		r := newRig(t, func(o *Options) { o.Manners.QuietHours = span })
		defer r.stop()
		r.say(grp, alice, mention("100"), text(" hi"))
		r.say(Chat{Kind: Private, ID: "1"}, alice, text("hi in private"))
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if _, turns, _ := r.agent.snapshot(); len(turns) != 1 || turns[0].Kind != Private {
			t.Fatalf("turns in quiet hours = %+v, want only the private one", turns)
		}
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if _, turns, _ := r.agent.snapshot(); len(turns) != 2 {
			t.Errorf("turns after quiet hours = %d, want the group's answered", len(turns))
		}
	})
}

func TestChimeIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dice := []float64{0.9, 0.05}
		r := newRig(t, func(o *Options) {
			o.Manners.ChimeIn = 0.1
			o.Rand = func() float64 { d := dice[0]; dice = dice[1:]; return d }
		})
		defer r.stop()
		r.say(grp, alice, text("a"))
		time.Sleep(time.Minute)
		r.say(grp, alice, text("b"))
		time.Sleep(time.Minute)
		synctest.Wait()
		if _, turns, _ := r.agent.snapshot(); len(turns) != 1 || turns[0].MessageID != "m2" {
			t.Errorf("turns = %+v, want one chime-in on the second", turns)
		}
	})
}

func TestDeliveryInOrderWithMentionsRepliesAndPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		hi := r.say(grp, alice, text("hi"))
		r.say(grp, User{ID: "3", Name: "Mary Ann"}, text("yo"))
		r.sink.Disconnected(errors.New("gone"))
		r.out.push("t:group:42", "m9", "@last_alice ok!", "and @{Mary Ann} too, @alice，@nobody")
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := r.ad.sentSoFar(); len(got) != 0 {
			t.Fatalf("sent while offline: %v", got)
		}
		r.sink.Connected(r.ad.self)
		synctest.Wait()
		got := r.ad.sentSoFar()
		want := []string{"t:group:42 <reply " + hi + ">ok!"}
		if !slices.Equal(got, want) {
			t.Fatalf("first part = %v, want %v", got, want)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		got = r.ad.sentSoFar()
		want = append(want, "t:group:42 and <at 3> too, <at 1>，@nobody")
		if !slices.Equal(got, want) {
			t.Fatalf("sent = %q, want %q", got, want)
		}
		if r.out.pending() != 0 {
			t.Error("outbox not drained")
		}
	})
}

func TestUndeliverableRepliesAreNotedForTheModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		r.ad.fail = &SendError{Msg: "muted in this group"}
		r.out.push("t:group:42", "m1", "hello")
		r.ad.mu.Lock()
		r.ad.mu.Unlock()
		time.Sleep(time.Second)
		synctest.Wait()
		_, _, notes := r.agent.snapshot()
		if len(notes) != 1 || !strings.Contains(notes[0], "muted in this group") || !strings.HasPrefix(notes[0], "t:group:42") {
			t.Fatalf("notes = %q", notes)
		}
		// a temporary error is retried
		r.ad.mu.Lock()
		r.ad.fail = &SendError{Temporary: true, RetryAfter: 3 * time.Second, Msg: "rate limited"}
		r.ad.mu.Unlock()
		r.out.push("t:group:42", "m2", "again")
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := r.ad.sentSoFar(); len(got) != 1 || got[0] != "t:group:42 again" {
			t.Errorf("sent = %q", got)
		}
		if s := r.b.Status(); s.Failed != 1 || s.Sent != 1 {
			t.Errorf("status = %+v", s)
		}
	})
}

func TestReplyToTheBotAddressesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		r.out.push("t:group:42", "m1", "I said this")
		time.Sleep(time.Second)
		synctest.Wait()
		r.say(grp, alice, Part{Kind: PartReply, MessageID: "s1"}, text("why?"))
		r.say(grp, bob, Part{Kind: PartReply, MessageID: "999"}, text("unrelated"))
		time.Sleep(time.Minute)
		synctest.Wait()
		stored, turns, _ := r.agent.snapshot()
		if len(turns) != 1 || turns[0].SpeakerID != "t:1" {
			t.Errorf("turns = %+v, want one for the reply to the bot", turns)
		}
		if !strings.HasPrefix(stored[0].Text, "[reply to ^cyan] why?") { // one of the bot's own, by the ids it sent
			t.Errorf("stored = %q", stored[0].Text)
		}
	})
}

func TestQuotedMessagesBecomeReplies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		r.agent.quotes = map[string]string{"a1": "77", "a2": "78"}
		r.out.pushPacket(router.Packet{Key: "a1", Channel: "t:group:42", Kind: router.KindReply, Text: "「alice: is it raining?」 yes, take an umbrella"})
		r.out.pushPacket(router.Packet{Key: "a2", Channel: "t:group:42", Kind: router.KindReply, Text: "「alice: hm」"})
		time.Sleep(time.Minute)
		synctest.Wait()
		want := []string{"t:group:42 <reply 77>yes, take an umbrella", "t:group:42 <reply 78>"}
		if got := r.ad.sentSoFar(); !slices.Equal(got, want) {
			t.Errorf("sent %q, want %q", got, want)
		}
	})
}

func TestATurnRefusedForNowIsAskedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		defer r.stop()
		r.agent.later = []error{&Later{After: 40 * time.Second, Reason: "the message limit"}}
		r.say(grp, alice, mention("100"), text(" hi"))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		r.say(grp, bob, mention("100"), text(" me too"))
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if _, turns, _ := r.agent.snapshot(); len(turns) != 1 {
			t.Fatalf("turns = %+v before the wait is over, want the refused one", turns)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		_, turns, _ := r.agent.snapshot()
		if len(turns) != 2 || turns[1].MessageID != "m2" || turns[1].SpeakerID != "t:1" {
			t.Fatalf("turns = %+v, want one more over both messages, for the first asker", turns)
		}
		if s := r.b.Status(); s.Turns != 1 {
			t.Errorf("status counts %d turns, want 1 (the refused one did not run)", s.Turns)
		}
	})
}
