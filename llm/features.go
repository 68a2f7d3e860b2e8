package llm

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The forms of Options.ThinkOff.
const (
	thinkReasoningEffort = "reasoning_effort"
	thinkTemplateKwargs  = "chat_template_kwargs"
	thinkNone            = "none"
)

// ThinkOffCooldown is how long a server that rejected the request to turn
// thinking off is not sent it again; then it is tried anew (the server
// may have been upgraded or swapped).
const ThinkOffCooldown = 10 * time.Minute

// thinkOffMode resolves Options.ThinkOff for a provider and base URL.
func thinkOffMode(v, provider, base string) (string, error) {
	switch v = strings.ToLower(strings.TrimSpace(v)); v {
	case thinkReasoningEffort, thinkTemplateKwargs, thinkNone:
		return v, nil
	case "", "auto":
	default:
		return "", fmt.Errorf("llm.think_off is %q; use auto, reasoning_effort, chat_template_kwargs or none", v)
	}
	if provider != "openai" {
		return thinkNone, nil
	}
	e := &Error{URL: base}
	switch {
	case e.looksLikeOllama():
		return thinkReasoningEffort, nil
	case e.looksLocal() || privateHost(base):
		return thinkTemplateKwargs, nil
	}
	return thinkNone, nil
}

// privateHost reports whether base names a host on a private network (a
// model server on the LAN, not a hosted API).
func privateHost(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return strings.HasPrefix(h, "10.") || strings.HasPrefix(h, "192.168.") || strings.HasSuffix(h, ".local") ||
		!strings.Contains(h, ".")
}

// features remembers what a server refused, until when.
type features struct {
	mu  sync.Mutex
	off map[string]time.Time
}

// on reports whether feature may be used at now.
func (f *features) on(feature string, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	until, ok := f.off[feature]
	if ok && now.After(until) {
		delete(f.off, feature)
		return true
	}
	return !ok
}

// refuse turns feature off until now+d.
func (f *features) refuse(feature string, now time.Time, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off == nil {
		f.off = map[string]time.Time{}
	}
	f.off[feature] = now.Add(d)
}

// thinkOffNow is the form a ThinkOff request takes now: the configured
// one, or none while the server's refusal of it cools down.
func (c *conn) thinkOffNow() string {
	if c.thinkOff == thinkNone || !c.features.on("think_off", c.now()) {
		return thinkNone
	}
	return c.thinkOff
}

// refusedThinkOff reports whether err is the server rejecting the request
// to turn thinking off that req carried; the form is then left out for
// ThinkOffCooldown, and the call is worth one more try without it.
func (c *conn) refusedThinkOff(err error, req Request, sent string) bool {
	var e *Error
	if req.Think != ThinkOff || sent == thinkNone || !errors.As(err, &e) || e.Kind != Unsupported || e.Feature != "think_off" {
		return false
	}
	c.features.refuse("think_off", c.now(), ThinkOffCooldown)
	c.log.Warn("llm: the server rejected the request to turn thinking off; it is left out for a while",
		"form", sent, "for", ThinkOffCooldown, "err", err)
	return true
}
