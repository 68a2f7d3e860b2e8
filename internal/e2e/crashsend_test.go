package e2e

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/onebottest"
)

// TestAQQSendCutByACrashIsLookedForNotSentTwice kills the daemon (kill -9)
// after it wrote a reply to QQ and before QQ confirmed it. After the
// restart the reply is looked for in the group's history: posted, it is
// not sent again and counts as sent; never posted (QQ lost it with the
// crash), it is sent, once. Either way the members see it once, the model
// is not asked again, and nothing is left unknown. Before flights, the
// restart sent it blind: twice in the group.
func TestAQQSendCutByACrashIsLookedForNotSentTwice(t *testing.T) {
	t.Parallel()
	for _, posted := range []bool{true, false} {
		t.Run(fmt.Sprintf("posted=%v", posted), func(t *testing.T) {
			t.Parallel()
			r := newQQRig(t, "")
			r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "here I am"} })
			// QQ takes the message at once and never confirms it in time:
			// NapCat's answer waits for the confirmation (onebottest.Impl.
			// ConfirmDelay).
			var confirm atomic.Int64
			confirm.Store(int64(time.Hour))
			r.impl.Confirm = func() time.Duration { return time.Duration(confirm.Load()) }
			r.impl.KernelTimeout = 2 * time.Hour
			r.say(t, 1, "amy", onebottest.At(fmt.Sprint(botQQ)), onebottest.Text(" are you there?"))
			r.sends(t, 1)
			for deadline := time.Now().Add(10 * time.Second); len(r.impl.Posted("group", groupQ)) == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the reply was never posted")
				}
			}
			turns := len(chatRequests(r.fake))
			r.d.kill()
			if !posted {
				r.impl.Forget(r.impl.LastPosted("group", groupQ))
			}
			confirm.Store(0)
			r.impl.Disconnect()
			r.d = start(t, r.d.dataDir, r.envv)
			r.connect(t)
			r.waitBridge(t, func(b map[string]any) bool { return b["queue"].(float64) == 0 })
			if got := r.impl.Posted("group", groupQ); len(got) != 1 || got[0] != "here I am" {
				t.Errorf("the group shows %q, want the reply once", got)
			}
			waitLog(t, r.d, "a message whose send was cut before the platform answered is")
			wantSends := 1
			if !posted {
				wantSends = 2
			}
			if n := len(r.impl.Calls("send_group_msg")); n != wantSends {
				t.Errorf("%d sends, want %d", n, wantSends)
			}
			// the lookup, and the catch-up after the connection
			if n := len(r.impl.Calls("get_group_msg_history")); n != 2 {
				t.Errorf("%d history reads, want 2", n)
			}
			if n := len(chatRequests(r.fake)); n != turns {
				t.Errorf("%d model calls after the restart, want %d", n, turns)
			}
			b := r.waitBridge(t, func(map[string]any) bool { return true })
			if b["unknown"] != nil || b["failed"] != 0.0 || b["sent"] != 1.0 {
				t.Errorf("bridge status %v: want one sent, nothing unknown or failed", b)
			}
			if s := r.d.stderr.String(); !strings.Contains(s, map[bool]string{true: "is in the chat; not sent again", false: "is not in the chat; sending it"}[posted]) {
				t.Errorf("the log does not say what became of it:\n%s", s)
			}
		})
	}
}
