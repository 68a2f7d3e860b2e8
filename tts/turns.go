package tts

import (
	"context"
	"errors"
	"sync"
)

// turns is a voice's queue of syntheses: at most n run at once, and they
// start in the order their tickets were taken. A reply takes its
// segments' tickets in order before any of them waits, so a long reply is
// made first sentence to last (a server that makes one clip at a time,
// such as GPT-SoVITS's api_v2, is never asked for sentence 20 before
// sentence 8), and a segment's timeout starts when its turn comes, not
// while it waits behind the others.
type turns struct {
	mu      sync.Mutex
	free    int
	waiting []*ticket
}

func newTurns(n int) *turns { return &turns{free: n} }

// ticket is one synthesis's place in the queue.
type ticket struct {
	q     *turns
	ready chan struct{} // closed when its turn comes, or it is given back before
	state int           // under q.mu
	held  bool          // under q.mu: a synthesis has its turn (wait returned nil)
}

// A ticket's states.
const (
	ticketWaiting = iota
	ticketGranted
	ticketOver
)

// errGivenUp is the wait of a ticket its holder gave back before its turn.
var errGivenUp = errors.New("tts: the synthesis was given up before its turn")

// take queues a ticket; it runs when wait returns nil.
func (q *turns) take() *ticket {
	t := &ticket{q: q, ready: make(chan struct{})}
	q.mu.Lock()
	q.waiting = append(q.waiting, t)
	q.grant()
	q.mu.Unlock()
	return t
}

// grant gives the free places to the oldest waiting tickets. Callers hold
// q.mu.
func (q *turns) grant() {
	for q.free > 0 && len(q.waiting) > 0 {
		t := q.waiting[0]
		q.waiting = q.waiting[1:]
		t.state = ticketGranted
		q.free--
		close(t.ready)
	}
}

// wait blocks until the ticket's turn, ctx's end, or the ticket is given
// back; once it returns nil, the synthesis holds the place until done.
func (t *ticket) wait(ctx context.Context) error {
	select {
	case <-t.ready:
		t.q.mu.Lock()
		defer t.q.mu.Unlock()
		if t.state != ticketGranted {
			return errGivenUp
		}
		t.held = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// done gives the ticket back: its place goes to the next, or, before its
// turn, it leaves the queue. Calling it again does nothing.
func (t *ticket) done() {
	q := t.q
	q.mu.Lock()
	defer q.mu.Unlock()
	t.over()
}

// leave gives the ticket back for a caller that no longer waits for its
// synthesis, unless a synthesis holds its place: that one gives it back
// when it ends, so no more run at once than the queue allows.
func (t *ticket) leave() {
	q := t.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if !t.held {
		t.over()
	}
}

// over ends the ticket; the caller holds q.mu.
func (t *ticket) over() {
	q := t.q
	switch t.state {
	case ticketOver:
		return
	case ticketGranted:
		q.free++
	case ticketWaiting:
		for i, w := range q.waiting {
			if w == t {
				q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
				break
			}
		}
		close(t.ready)
	}
	t.state = ticketOver
	q.grant()
}
