package onebot

import (
	"context"
	"sync"
)

// eventQueue holds the message and notice events the read loop hands to
// the event goroutine. It grows as needed, so pushing never waits: the
// read loop keeps reading (heartbeats, responses) whatever the handling
// costs.
type eventQueue struct {
	mu     sync.Mutex
	items  []*Event
	wake   chan struct{}
	closed bool
}

func newEventQueue() *eventQueue { return &eventQueue{wake: make(chan struct{}, 1)} }

func (q *eventQueue) push(ev *Event) {
	q.mu.Lock()
	q.items = append(q.items, ev)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pop returns the oldest event, waiting for one; false once the queue is
// closed and empty, or ctx ends.
func (q *eventQueue) pop(ctx context.Context) (*Event, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			ev := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			q.mu.Unlock()
			return ev, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			return nil, false
		}
	}
}

func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
