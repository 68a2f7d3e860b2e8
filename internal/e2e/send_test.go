package e2e

import (
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
)

// TestSendSaysWhenThereIsNoReply: "cyan send" prints the replies and
// exits 0; when the companion says nothing it says so on stderr and exits
// 1, as "cyan chat" prints "(no reply)" — a script cannot take silence for
// an answer.
func TestSendSaysWhenThereIsNoReply(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	data := t.TempDir()
	d := start(t, data, env(data, url))
	fake.Enqueue(llmtest.Reply{Text: "hello back"})
	if out, errb, rc := cli(t, d.cliEnv(), "", "send", "hello"); rc != 0 || strings.TrimSpace(out) != "hello back" || errb != "" {
		t.Fatalf("a reply: %d %q %q", rc, out, errb)
	}
	fake.Enqueue(llmtest.Reply{Text: "<empty_reply>"})
	out, errb, rc := cli(t, d.cliEnv(), "", "send", "anyone?")
	if rc != 1 || out != "" || !strings.Contains(errb, "(no reply)") {
		t.Fatalf("silence: %d %q %q", rc, out, errb)
	}
}
