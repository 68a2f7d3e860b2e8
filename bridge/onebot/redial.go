package onebot

import (
	"sync"
	"time"
)

// The forward dialer's schedule. The dialer makes one connection attempt
// per Run and returns why it ended, marked with the wait this schedule
// learned (supervise.RetryAfter): the supervisor starts the next attempt.
// A failed attempt waits 1 s, doubling up to Options.Reconnect; once the
// implementation is known to refuse the access token the waits start at
// authWait and grow to minutes (authMaxWait), so a wrong token costs a
// handful of attempts a minute, not one a second. Only a connection that
// proved healthy (get_login_info answered and a heartbeat seen) resets the
// wait.
const (
	authWait    = 5 * time.Second
	authMaxWait = 5 * time.Minute
	// quickClose: a connection the implementation ends this soon, before
	// answering get_login_info, counts as refused; quickCloses of them in a
	// row (and nothing else) mean the token is wrong (NapCat and LLOneBot
	// accept the upgrade, send a 1403 frame and close).
	quickClose  = 5 * time.Second
	quickCloses = 3
)

// redial is what the forward dialer learned over its attempts, kept
// across runs.
type redial struct {
	max time.Duration // Options.Reconnect

	mu      sync.Mutex
	wait    time.Duration // the wait after the next attempt
	refused bool          // the implementation refused the token
	quick   int           // quick closes in a row
}

func newRedial(max time.Duration) *redial { return &redial{max: max, wait: time.Second} }

// loggedIn notes a connection that answered get_login_info: the quick
// closes before it do not count.
func (r *redial) loggedIn() {
	r.mu.Lock()
	r.quick = 0
	r.mu.Unlock()
}

// closedQuickly notes a connection closed within quickClose, before it
// logged in, and reports whether that makes quickCloses in a row — the
// implementation refuses the token — and how many.
func (r *redial) closedQuickly() (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.quick++
	return r.quick, r.quick >= quickCloses
}

// after returns the wait after an attempt: healthy if the connection
// proved itself, refused if the implementation refused the token.
func (r *redial) after(healthy, refused bool) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case healthy:
		r.wait, r.refused = time.Second, false
	case refused:
		r.wait, r.refused = max(r.wait, authWait), true
	}
	d := r.wait
	limit := r.max
	if r.refused {
		limit = max(authMaxWait, r.max)
	}
	r.wait = min(r.wait*2, limit)
	return d
}
