package e2e

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/onebottest"
)

// TestWhatTheGroupSaidWhileCyanWasDownIsKept stops the daemon; while it is
// down the group talks, and NapCat — whose reverse client sends an event
// only while its socket is open — drops those events. After the restart
// the bridge reads the group's history: the messages said meanwhile are
// stored, in order, once, and the last one, which asked the bot, is
// answered, once.
func TestWhatTheGroupSaidWhileCyanWasDownIsKept(t *testing.T) {
	t.Parallel()
	r := newQQRig(t, "")
	r.fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(last, "did you see the lunch plan") {
			return llmtest.Reply{Text: "yes, noon it is"}
		}
		return llmtest.Reply{Text: "<empty_reply>"}
	})
	r.say(t, 1, "amy", onebottest.Text("hi all"))
	r.stored(t, 1)
	r.d.stop(syscall.SIGTERM)
	for _, m := range []struct {
		user int64
		card string
		segs []onebottest.Seg
	}{
		{2, "ben", []onebottest.Seg{onebottest.Text("lunch at noon?")}},
		{1, "amy", []onebottest.Seg{onebottest.At(fmt.Sprint(botQQ)), onebottest.Text(" did you see the lunch plan?")}},
	} {
		// the implementation has no one to tell: the event is dropped,
		// the message is in the group all the same
		if _, err := r.impl.Group(groupQ, onebottest.Sender{UserID: m.user, Nickname: m.card + "-nick", Card: m.card}, m.segs...); !errors.Is(err, onebottest.ErrNotConnected) {
			t.Fatalf("a message while cyan is down: %v, want it dropped", err)
		}
	}
	r.impl.Disconnect()
	r.d = start(t, r.d.dataDir, r.envv)
	r.connect(t)
	users := r.stored(t, 3)
	var got []string
	for _, u := range users {
		got = append(got, fmt.Sprint(u["text"]))
	}
	if len(got) != 3 || !strings.Contains(got[0], "hi all") || !strings.Contains(got[1], "lunch at noon?") || !strings.Contains(got[2], "did you see the lunch plan?") {
		t.Fatalf("stored %q, want the three in order", got)
	}
	if calls := r.sends(t, 1); calls[0].Text() != "yes, noon it is" {
		t.Fatalf("answered %q", texts(calls))
	}
	waitLog(t, r.d, "caught up on what the chats said while the bridge was away")
	time.Sleep(500 * time.Millisecond) // nothing more may come
	if n := len(r.impl.Calls("send_group_msg")); n != 1 {
		t.Errorf("%d sends, want 1", n)
	}
	if n := len(r.stored(t, 3)); n != 3 {
		t.Errorf("%d user messages stored, want 3", n)
	}
}
