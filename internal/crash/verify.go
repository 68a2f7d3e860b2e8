package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// verify starts the daemon with the fault cleared, lets each client's
// pending message through, checks every channel and that recall, the
// workspace and the event log answer, and stops the daemon with SIGTERM.
func (h *harness) verify(ctx context.Context, clients []*client) error {
	h.fault.clear()
	p, err := h.startListening(ctx)
	if err != nil {
		return err
	}
	defer p.kill()
	for _, c := range clients {
		if err := c.settle(ctx, p.base); err != nil {
			return fmt.Errorf("%w\n%s", err, p.logTail(4000))
		}
	}
	var lost, dup, order, replies int
	var failures []string
	for _, c := range clients {
		l, d, o, r, err := c.check(p.base)
		if err != nil {
			failures = append(failures, err.Error())
		}
		lost, dup, order, replies = lost+l, dup+d, order+o, replies+r
	}
	failures = append(failures, h.answers(p.base, clients)...)
	took, inTime := p.terminate(15 * time.Second)
	if !inTime {
		failures = append(failures, fmt.Sprintf("SIGTERM: still running after %s", took.Round(time.Millisecond)))
	} else if p.cmd.ProcessState.ExitCode() != 0 {
		failures = append(failures, fmt.Sprintf("SIGTERM: exit status %d:\n%s", p.cmd.ProcessState.ExitCode(), p.logTail(2000)))
	}
	h.count(func(r *Report) {
		r.Lost, r.Duplicated, r.OutOfOrder, r.MissingReplies = lost, dup, order, replies
		r.Checks++
		r.CheckFailures = append(r.CheckFailures, failures...)
	})
	return nil
}

type listed struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

func getMessages(base, channel string) ([]listed, error) {
	resp, err := http.Get(base + "/api/v1/messages?limit=1000&channel=" + channel)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Messages []listed `json:"messages"`
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET messages of %s: status %d", channel, resp.StatusCode)
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	return out.Messages, err
}

// check reads the client's channels: each acknowledged message once, in
// order, each followed by exactly its one reply.
func (c *client) check(base string) (lost, dup, order, replies int, err error) {
	for ch := 0; ch*perChannel < c.next; ch++ {
		msgs, err := getMessages(base, c.channel(ch*perChannel))
		if err != nil {
			return lost, dup, order, replies, err
		}
		seen := map[string]int{}
		last := -1
		for i, m := range msgs {
			if m.Role != "user" {
				continue
			}
			mark := markRe.FindString(m.Text)
			var n int
			if _, err := fmt.Sscanf(mark, fmt.Sprintf("c%d-%%d", c.id), &n); err != nil {
				return lost, dup, order, replies, fmt.Errorf("a message no client sent in %s: %q", c.channel(ch*perChannel), m.Text)
			}
			seen[mark]++
			if n <= last {
				order++
			}
			last = n
			got := 0
			for _, r := range msgs[i+1:] {
				if r.Role == "user" {
					break
				}
				if r.Role == "assistant" && r.Text == replyTo(mark) {
					got++
				}
			}
			if got != 1 {
				replies++
			}
		}
		for n := ch * perChannel; n < min(c.next, (ch+1)*perChannel); n++ {
			switch k := seen[c.mark(n)]; {
			case k == 0:
				lost++
			case k > 1:
				dup += k - 1
			}
		}
	}
	return lost, dup, order, replies, nil
}

// answers checks that recall finds a message, and that the workspace and
// the event log answer.
func (h *harness) answers(base string, clients []*client) []string {
	var failures []string
	for _, path := range []string{"/api/v1/memory", "/api/v1/events?channel=" + clients[0].channel(0), "/healthz"} {
		resp, err := http.Get(base + path)
		if err != nil {
			failures = append(failures, fmt.Sprintf("GET %s: %v", path, err))
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			failures = append(failures, fmt.Sprintf("GET %s: status %d", path, resp.StatusCode))
		}
	}
	c := clients[h.rng.IntN(len(clients))]
	if c.next == 0 {
		return failures
	}
	n := h.rng.IntN(c.next)
	mark := c.mark(n)
	body, _ := json.Marshal(map[string]any{"prompt": "message " + mark, "channel": c.channel(n), "mode": "search", "max_results": 10})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Post(base+"/api/v1/recall", "application/json", bytes.NewReader(body))
		if err != nil {
			return append(failures, fmt.Sprintf("recall %s: %v", mark, err))
		}
		var out struct {
			Results []struct {
				Text string `json:"text"`
			} `json:"results"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		for _, r := range out.Results {
			if strings.Contains(r.Text, mark) {
				return failures
			}
		}
		if time.Now().After(deadline) {
			return append(failures, fmt.Sprintf("recall does not find %s (status %d, %d results)", mark, resp.StatusCode, len(out.Results)))
		}
	}
}
