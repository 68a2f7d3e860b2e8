package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/backoff"
)

// retry is the wait before retry n+1 of a call: 500 ms doubling to 30 s,
// with jitter over its upper half.
var retry = backoff.Policy{Base: 500 * time.Millisecond, Max: 30 * time.Second, Jitter: true}

const (
	// maxRetryAfter is the longest Retry-After worth waiting for inside a
	// call; beyond it the call fails and the error says when to retry.
	maxRetryAfter = 60 * time.Second
)

// withRetries runs try until it succeeds, fails for good, or the tries run
// out. Only temporary *Errors are retried, never the caller's context
// ending; delivered (for streams) stops retries once the caller saw output.
func (c *conn) withRetries(ctx context.Context, x exchange, delivered func() bool, try func() error) error {
	for n := 0; ; n++ {
		err := try()
		if err == nil {
			return nil
		}
		var e *Error
		if !errors.As(err, &e) || !e.temporary() {
			return err
		}
		if delivered != nil && delivered() {
			return err
		}
		if e.RetryAfter > maxRetryAfter {
			return err
		}
		if n >= c.retries {
			return err
		}
		wait := e.RetryAfter
		if wait <= 0 {
			wait = retry.Delay(n)
		}
		c.log.Warn("llm: retrying", "provider", c.provider, "model", x.model, "try", n+2, "wait", wait, "err", err)
		if err := c.sleep(ctx, wait); err != nil {
			if ctx.Err() != nil {
				return c.ctxError(ctx)
			}
			return fmt.Errorf("llm: waiting to retry %s: %w", c.provider, err)
		}
	}
}

// parseRetryAfter reads retry-after-ms (OpenAI) or Retry-After in seconds or
// as an HTTP date. 0 when absent or in the past.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || s > 1e9 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
