package bridge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/store"
)

// ownAgent adds OwnRecaller to the fake agent: its stored replies are the
// keys in said (channel + " " + key → text).
type ownAgent struct {
	*fakeAgent
	omu      sync.Mutex
	said     map[string]string
	recalled []string
}

func (a *ownAgent) RecallOwn(_ context.Context, channel, storedID string) (string, error) {
	a.omu.Lock()
	defer a.omu.Unlock()
	text, ok := a.said[channel+" "+storedID]
	if !ok {
		return "", ErrNotStored
	}
	a.recalled = append(a.recalled, channel+" "+storedID)
	return text, nil
}

// The bot's replies are sent by a bridge over a store; the daemon
// restarts (the store closed and opened again, a new bridge over it); an
// admin then recalls them: the new bridge finds each key from the
// platform id alone, also when the notice names no sender, the agent
// marks those stored replies recalled, and the model is told what it no
// longer said.
func TestARecallOfTheBotsMessageAfterARestartIsApplied(t *testing.T) {
	dir := t.TempDir()
	open := func() *store.Store { return openStoreIn(t, dir) }
	said := map[string]string{"t:group:42 k-reply": "the weather is fine", "t:group:42 k-next": "and tomorrow too"}
	build := func(st *store.Store) (*rig, *ownAgent) {
		sent, err := NewStoreSent(st, "t")
		if err != nil {
			t.Fatal(err)
		}
		var oa *ownAgent
		r := newRig(t, func(o *Options) {
			oa = &ownAgent{fakeAgent: o.Agent.(*fakeAgent), said: said}
			o.Agent, o.Sent = oa, sent
		})
		return r, oa
	}

	st := open()
	r, _ := build(st)
	for _, p := range []router.Packet{{Key: "k-reply", Channel: "t:group:42", Kind: router.KindReply, Text: "the weather is fine"},
		{Key: "k-next", Channel: "t:group:42", Kind: router.KindReply, Text: "and tomorrow too"}} {
		if err := r.b.Deliver(context.Background(), router.Delivery{Packet: p, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.ad.sentSoFar(); len(got) != 2 {
		t.Fatalf("sent %q, want the replies", got)
	}
	r.stop()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = open()
	defer st.Close()
	r, oa := build(st)
	defer r.stop()
	// the fake adapter numbers its sends s1, s2; the notice of the second
	// names no sender: the sent log knows it as the bot's in this chat
	rn := r.sink.(RecallNoticer)
	rn.RecalledBy(context.Background(), grp, "s1", r.ad.self, alice)
	rn.RecalledBy(context.Background(), grp, "s2", User{}, alice)
	oa.omu.Lock()
	recalled := slices.Clone(oa.recalled)
	oa.omu.Unlock()
	if fmt.Sprint(recalled) != "[t:group:42 k-reply t:group:42 k-next]" {
		t.Errorf("recalled %q after the restart, want the stored replies k-reply, k-next", recalled)
	}
	_, _, notes := r.agent.snapshot()
	if len(notes) != 2 || !strings.Contains(notes[0], "alice withdrew (recalled) your message «the weather is fine»") ||
		!strings.Contains(notes[1], "alice withdrew (recalled) your message «and tomorrow too»") {
		t.Errorf("notes %q", notes)
	}
}

// A reply to the bot's message sent before a restart still addresses the
// bot and reads as a reply to it: the sent log in the store knows the
// platform id in that chat. The same id in another chat is no message of
// the bot's there.
func TestAReplyToTheBotsMessageBeforeARestartAddressesIt(t *testing.T) {
	sent := sentAcrossARestart(t, func(r *rig) {
		err := r.b.Deliver(context.Background(), router.Delivery{Packet: router.Packet{Key: "k-reply", Channel: "t:group:42",
			Kind: router.KindReply, Text: "I said this"}, Attempt: 1})
		if err != nil {
			t.Fatal(err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, func(o *Options) { o.Sent = sent })
		defer r.stop()
		r.say(grp, alice, Part{Kind: PartReply, MessageID: "s1"}, text("why?"))
		r.say(Chat{Kind: Group, ID: "43"}, bob, Part{Kind: PartReply, MessageID: "s1"}, text("unrelated"))
		time.Sleep(time.Minute)
		synctest.Wait()
		stored, turns, _ := r.agent.snapshot()
		if len(turns) != 1 || turns[0].SpeakerID != "t:1" {
			t.Errorf("turns = %+v, want one for the reply to the bot", turns)
		}
		if len(stored) != 2 || !strings.HasPrefix(stored[0].Text, "[reply to ^cyan] why?") || strings.Contains(stored[1].Text, "^cyan") {
			t.Errorf("stored = %+v", stored)
		}
	})
}

// The reverse index of the store's sent log lists every key sent as a
// platform id (one id may recur across chats) and tells the chats it was
// sent in, keeps them as long as the keys themselves, and is not written
// for a send without an id; the in-memory log answers alike.
func TestSentAsListsTheKeysOfAPlatformID(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := NewStoreSent(st, "t")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewStoreSent(st, "u")
	if err != nil {
		t.Fatal(err)
	}
	for _, log := range []interface {
		SentLog
		SentIDs
	}{s, newMemSent(16)} {
		for _, m := range [][3]string{{"t:group:1", "k-a", "7"}, {"t:group:2", "k-b", "7"}, {"t:group:1", "k-c", "70"}, {"t:group:1", "k-d", ""}} {
			if err := log.MarkSentIn(m[0], m[1], m[2]); err != nil {
				t.Fatal(err)
			}
		}
		if err := log.MarkSent("k-e", "9"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			channel, id string
			want        bool
		}{{"t:group:1", "7", true}, {"t:group:2", "7", true}, {"t:group:3", "7", false}, {"t:group:2", "70", false},
			{"t:group:1", "", false}, {"", "9", false}, {"t:group:1", "9", false}} {
			if got, err := log.SentIn(c.channel, c.id); err != nil || got != c.want {
				t.Errorf("%T: SentIn(%q, %q) = %v, %v; want %v", log, c.channel, c.id, got, err, c.want)
			}
		}
		for id, want := range map[string]string{"7": "[k-a k-b]", "70": "[k-c]", "9": "[k-e]", "": "[]", "8": "[]"} {
			got, err := log.SentAs(id)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != want {
				t.Errorf("%T: SentAs(%q) = %q, want %s", log, id, got, want)
			}
		}
	}
	if got, _ := other.SentAs("7"); len(got) != 0 {
		t.Errorf("another bridge's log lists %q", got)
	}
	var own int
	err = st.DB().View(func(txn *badger.Txn) error {
		prefix := []byte(store.PrefixBridge + "own\x00t\x00")
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			own++
			if exp := it.Item().ExpiresAt(); exp == 0 || exp < uint64(time.Now().Add(sentTTL-time.Hour).Unix()) {
				return errors.New("an entry of the reverse index is not kept for sentTTL: " + string(it.Item().Key()))
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if own != 4 {
		t.Errorf("the reverse index holds %d entries, want 4", own)
	}
}

// An alert the bridge sent outside the outbox (Tell; answers to chat
// commands take the same way) is the bot's own after a restart too: a
// reply to it addresses the bot.
func TestAReplyToAnAlertBeforeARestartAddressesTheBot(t *testing.T) {
	sent := sentAcrossARestart(t, func(r *rig) {
		if err := r.b.Tell(context.Background(), grp, "the other bridge is offline"); err != nil {
			t.Fatal(err)
		}
		if got := r.ad.sentSoFar(); len(got) != 1 {
			t.Fatalf("sent %q, want the alert", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, func(o *Options) { o.Sent = sent })
		defer r.stop()
		r.say(grp, alice, Part{Kind: PartReply, MessageID: "s1"}, text("which one?"))
		time.Sleep(time.Minute)
		synctest.Wait()
		_, turns, _ := r.agent.snapshot()
		if len(turns) != 1 || turns[0].SpeakerID != "t:1" {
			t.Errorf("turns = %+v, want one for the reply to the bot's alert", turns)
		}
	})
}

// sentAcrossARestart runs send on a bridge whose sent log is in a store,
// stops the bridge, closes the store and opens it again (a restart), and
// returns the sent log read from it (the store closes when t ends).
func sentAcrossARestart(t *testing.T, send func(r *rig)) *StoreSent {
	t.Helper()
	dir := t.TempDir()
	st := openStoreIn(t, dir)
	sent, err := NewStoreSent(st, "t")
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, func(o *Options) { o.Sent = sent })
	send(r)
	r.stop()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openStoreIn(t, dir)
	t.Cleanup(func() { st.Close() })
	sent, err = NewStoreSent(st, "t")
	if err != nil {
		t.Fatal(err)
	}
	return sent
}
