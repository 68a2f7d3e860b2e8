package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/onebottest"
)

// TestAQQGroupsPromptHoldsEachUpdateAsWhatItIs runs the daemon with a
// reverse OneBot bridge and NapCat's stand-in: a mini-app card, a join
// and an address reach the model's prompt as a line of Alice's with the
// card's title and link, a platform line for the join — then /reset is
// answered at once and the next turn's context starts after it.
func TestAQQGroupsPromptHoldsEachUpdateAsWhatItIs(t *testing.T) {
	yaml := "bridges:\n  onebot:\n    - {name: qq, mode: reverse, access_token: tok}\n" +
		"  manners: {debounce: 50ms, max_wait: 100ms, reply_delay: 1ms, char_delay: 1ms}\n"
	r := newRig(t, map[string]string{"cyan.yaml": yaml})
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "mm"} })
	impl := &onebottest.Impl{SelfID: 10001, Nickname: "青蓝", Token: "tok"}
	if err := impl.Connect(context.Background(), "ws"+strings.TrimPrefix(r.base, "http")+"/onebot/v11/ws"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the bridge connected", func() bool {
		st := r.d.bridges.Status()
		return len(st) == 1 && st[0].Connected && st[0].Self == "10001"
	})
	alice := onebottest.Sender{UserID: 1, Card: "Alice"}
	ark := `{"app":"com.tencent.miniapp_01","prompt":"[QQ小程序]哔哩哔哩","meta":{"detail_1":{"title":"哔哩哔哩","desc":"猫猫打架","qqdocurl":"https://b23.tv/abc123"}}}`
	if _, err := impl.GroupSegs(555, alice, onebottest.JSONCard(ark)); err != nil {
		t.Fatal(err)
	}
	if err := impl.GroupIncrease(555, 4, 1, "approve"); err != nil {
		t.Fatal(err)
	}
	if _, err := impl.Group(555, alice, onebottest.At("10001"), onebottest.Text(" what is that?")); err != nil {
		t.Fatal(err)
	}
	prompt := waitPrompt(t, r, "what is that?")
	for _, want := range []string{"Alice", "[card: 哔哩哔哩 — 猫猫打架 https://b23.tv/abc123]", "what is that?"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	joined := lineWith(prompt, "joined the group")
	if joined == "" || !strings.Contains(joined, "^system") || strings.Contains(joined, "Alice") {
		t.Errorf("the join reads %q; want a platform line, not someone's message:\n%s", joined, prompt)
	}
	if strings.Contains(prompt, "empty message") {
		t.Errorf("the prompt has an empty message:\n%s", prompt)
	}

	if _, err := impl.Group(555, alice, onebottest.Text("/reset")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the answer to /reset", func() bool {
		for _, c := range impl.Calls("send_group_msg") {
			if strings.Contains(c.Text(), "New topic") {
				return true
			}
		}
		return false
	})
	if _, err := impl.Group(555, alice, onebottest.At("10001"), onebottest.Text(" and now?")); err != nil {
		t.Fatal(err)
	}
	prompt = waitPrompt(t, r, "and now?")
	if strings.Contains(prompt, "哔哩哔哩") || strings.Contains(prompt, "]: /reset") {
		t.Errorf("after /reset the context still holds the old topic or the command:\n%s", prompt)
	}
	if !strings.Contains(prompt, "a new topic begins here") || !strings.Contains(prompt, "and now?") {
		t.Errorf("after /reset the context does not start at its line:\n%s", prompt)
	}
}

// waitPrompt waits for a turn's request to the model whose conversation
// holds last, and returns that conversation as text (other requests, the
// event log's titles, are passed over).
func waitPrompt(t *testing.T, r *rig, last string) string {
	t.Helper()
	var prompt string
	waitFor(t, "a turn on "+last, func() bool {
		for _, req := range r.fake.Requests() {
			var b strings.Builder
			for _, m := range req.Messages {
				if m.Role != "system" {
					b.WriteString(m.Content + "\n")
				}
			}
			if strings.Contains(b.String(), last) {
				prompt = b.String()
				return true
			}
		}
		return false
	})
	return prompt
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) { // polling the daemon
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
