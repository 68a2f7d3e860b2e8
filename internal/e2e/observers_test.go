package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// follow reads GET /api/v1/stream of a channel and sends each message
// event's JSON.
func follow(t *testing.T, d *daemon, channel string) <-chan map[string]any {
	t.Helper()
	out := make(chan map[string]any, 16)
	resp, err := http.Get(d.base + "/api/v1/stream?channel=" + channel)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", resp, err)
	}
	ready := make(chan struct{})
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				event = e
				continue
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			if event == "ready" {
				close(ready)
				continue
			}
			var m map[string]any
			if event == "message" && json.Unmarshal([]byte(data), &m) == nil {
				out <- m
			}
		}
		close(out)
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream never said ready")
	}
	return out
}

// waitObserver waits until the daemon runs an observer of that name (a
// plan is scheduled once its tool call has run, after the answer).
func waitObserver(t *testing.T, d *daemon, name string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		code, out, _ := d.get("/api/v1/observers")
		if code == 200 && strings.Contains(fmt.Sprint(out), "name:"+name+" ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("observer %s never ran: %v", name, out)
		}
		time.Sleep(20 * time.Millisecond) // polling the tool call that runs after the answer
	}
}

func TestDeferredPlanSpeaksFirst(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1].Content
		if strings.Contains(last, "^system [") && strings.Contains(last, "Plan p1 is due") {
			return llmtest.Reply{Text: "该起来活动一下啦！"}
		}
		return llmtest.Reply{Text: "ok"}
	})
	dir := t.TempDir()
	envv := env(dir, url)
	d := start(t, dir, envv)
	// Due in an hour: that it fires at its time is the daemon package's
	// test (TestADeferredPlanFiresAtItsTimeAfterARestart, on a settable
	// clock); here it survives a restart and, run by hand, speaks.
	due := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	fake.Enqueue(
		llmtest.Reply{Text: "好，到时候提醒你", ToolCalls: []llm.ToolCall{{ID: "p", Name: "plan", Arguments: fmt.Sprintf(`{"op":"create","text":"remind alice to stretch","at":%q}`, due)}}},
		llmtest.Reply{Text: "<empty_reply>"},
	)
	say(t, d, "home", "remind me to stretch in a few seconds")
	// Restart before the plan is due: it must survive.
	d.stop(syscall.SIGTERM)
	d2 := start(t, dir, envv)
	stream := follow(t, d2, "home")
	waitObserver(t, d2, "plan:p1")
	stdout, _, rc := cli(t, d2.cliEnv(), "", "observers", "ls")
	if rc != 0 || !strings.Contains(stdout, "plan:p1") || !strings.Contains(stdout, "main-observer") {
		t.Fatalf("cyan observers ls: rc=%d\n%s", rc, stdout)
	}
	if _, stderr, rc := cli(t, d2.cliEnv(), "", "observers", "run", "plan:p1"); rc != 0 {
		t.Fatalf("cyan observers run plan:p1: %d %s", rc, stderr)
	}
	select {
	case m := <-stream:
		if m["text"] != "该起来活动一下啦！" || m["proactive"] != true || m["role"] != "assistant" {
			t.Fatalf("streamed %v", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no proactive message\n%s", d2.stderr.String())
	}
	var proactive []map[string]any
	for _, m := range d2.messages(t, "home") {
		if m["proactive"] == true {
			proactive = append(proactive, m)
		}
	}
	if len(proactive) != 2 || proactive[0]["role"] != "system" || !strings.Contains(proactive[0]["text"].(string), "remind alice to stretch") || proactive[1]["text"] != "该起来活动一下啦！" {
		t.Fatalf("stored proactive messages: %v", proactive)
	}
	// The one-off plan becomes a current plan, no longer scheduled.
	for deadline := time.Now().Add(10 * time.Second); ; {
		code, out, _ := d2.get("/api/v1/observers")
		if code == 200 && !strings.Contains(fmt.Sprint(out), "plan:p1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("observers after the plan fired: %v", out)
		}
		time.Sleep(20 * time.Millisecond) // polling the observer's end, not a schedule
	}
}

// TestChatShowsProactiveMessages keeps `cyan chat` open while a plan comes
// due, and the companion's own message appears in the terminal.
func TestChatShowsProactiveMessages(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "is due now") {
			return llmtest.Reply{Text: "time to stretch!"}
		}
		return llmtest.Reply{Text: "ok"}
	})
	dir := t.TempDir()
	d := start(t, dir, env(dir, url))
	due := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	fake.Enqueue(
		llmtest.Reply{Text: "will do", ToolCalls: []llm.ToolCall{{ID: "p", Name: "plan", Arguments: fmt.Sprintf(`{"op":"create","text":"stretch","at":%q}`, due)}}},
		llmtest.Reply{Text: "<empty_reply>"},
	)
	chat := exec.Command(binary, "chat", "--channel", "home")
	chat.Env = d.cliEnv()
	stdin, _ := chat.StdinPipe()
	stdout, _ := chat.StdoutPipe()
	if err := chat.Start(); err != nil {
		t.Fatal(err)
	}
	defer chat.Process.Kill()
	lines := make(chan string, 32)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	fmt.Fprintln(stdin, "remind me to stretch")
	deadline := time.After(20 * time.Second)
	sawAnswer := false
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("cyan chat exited")
			}
			if !sawAnswer && strings.Contains(line, "will do") {
				sawAnswer = true
				// The plan is due (its time is the daemon package's test).
				waitObserver(t, d, "plan:p1")
				if _, stderr, rc := cli(t, d.cliEnv(), "", "observers", "run", "plan:p1"); rc != 0 {
					t.Fatalf("cyan observers run plan:p1: %d %s", rc, stderr)
				}
			}
			if strings.Contains(line, "青蓝: time to stretch!") {
				if !sawAnswer {
					t.Fatal("the proactive message came before the chat's own answer")
				}
				stdin.Close()
				return
			}
		case <-deadline:
			t.Fatal("the proactive message never showed in cyan chat")
		}
	}
}
