package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// perChannel is how many messages a client sends to one channel before it
// moves to the next, so that a channel's history reads in one request.
const perChannel = 150

// client is one conversation: it sends its messages one at a time, each
// with its mark as idempotency key, and sends the same message again until
// it is acknowledged.
type client struct {
	id   int
	h    *harness
	next int // the mark of the message to send (acknowledged: below it)
	http *http.Client
}

func newClient(id int, h *harness) *client {
	return &client{id: id, h: h, http: &http.Client{Transport: &http.Transport{DisableKeepAlives: false, MaxIdleConnsPerHost: 4}}}
}

func (c *client) mark(n int) string    { return fmt.Sprintf("c%d-%d", c.id, n) }
func (c *client) channel(n int) string { return fmt.Sprintf("crash-c%d-%d", c.id, n/perChannel) }

// talk sends messages until ctx ends or the daemon goes away.
func (c *client) talk(ctx context.Context, base string) {
	for ctx.Err() == nil {
		if !c.send(ctx, base) {
			return
		}
	}
}

// send sends message c.next once; false when the daemon did not answer.
func (c *client) send(ctx context.Context, base string) bool {
	mark := c.mark(c.next)
	body, _ := json.Marshal(map[string]string{"channel": c.channel(c.next), "user": fmt.Sprint("client", c.id), "text": "message " + mark + " from a client"})
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/api/v1/messages", bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", mark)
	c.h.count(func(r *Report) { r.Sent++ })
	resp, err := c.http.Do(req)
	if err != nil {
		c.h.count(func(r *Report) { r.Unanswered++ })
		return false
	}
	defer resp.Body.Close()
	var out struct {
		MessageID string   `json:"message_id"`
		Replies   []string `json:"replies"`
		Replayed  bool     `json:"replayed"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		c.h.count(func(r *Report) { r.Unanswered++ })
		return false
	}
	switch resp.StatusCode {
	case http.StatusOK:
		if len(out.Replies) != 1 || out.Replies[0] != replyTo(mark) {
			c.h.count(func(r *Report) {
				r.CheckFailures = append(r.CheckFailures, fmt.Sprintf("%s was answered with %q", mark, out.Replies))
			})
		}
		c.h.count(func(r *Report) {
			r.Acknowledged++
			if out.Replayed {
				r.Replayed++
			}
		})
		c.next++
	case http.StatusInsufficientStorage, http.StatusServiceUnavailable:
		c.h.count(func(r *Report) { r.Refused++ })
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
	default:
		c.h.count(func(r *Report) {
			r.CheckFailures = append(r.CheckFailures, fmt.Sprintf("%s: status %d", mark, resp.StatusCode))
		})
	}
	return true
}

// settle sends the client's pending message until it is acknowledged.
func (c *client) settle(ctx context.Context, base string) error {
	want := c.next + 1
	for tries := 0; c.next < want; tries++ {
		if tries == 200 {
			return fmt.Errorf("crash: %s was never acknowledged", c.mark(c.next))
		}
		if !c.send(ctx, base) {
			return fmt.Errorf("crash: the daemon stopped answering %s", c.mark(c.next))
		}
	}
	return nil
}
