package router

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// ByChannel is the lane of a packet for AttachLanes: its channel (a
// chat).
func ByChannel(p Packet) string { return p.Channel }

// AttachLanes is Attach with the outbox in lanes: packets of one lane (by
// lane(p); ByChannel: one chat) are delivered one at a time, oldest first,
// retried with backoff before any later packet of the lane, exactly as
// Attach does for the whole outbox; packets of different lanes are
// delivered at once, so one lane's retries and waits (a chat where the bot
// is muted, a rate limit's retry-after) never hold up another. The outbox
// stays one durable queue: a packet leaves it only when acknowledged, and
// after a restart each lane resumes from its oldest packet.
func (r *Router) AttachLanes(ctx context.Context, name string, c Component, lane func(Packet) string) error {
	st, err := r.attach(name)
	if err != nil {
		return err
	}

	type result struct {
		d    Delivery
		lane string
		err  error
	}
	var (
		busy     = map[string]bool{}
		notAfter = map[string]time.Time{} // a lane retrying: not before then
		attempts = map[uint64]int{}       // by Seq
		retrying = map[string]bool{}
		results  = make(chan result)
		running  int
	)
	defer func() {
		for running > 0 { // each delivery ends with ctx
			<-results
			running--
		}
		r.mu.Lock()
		st.attached, st.retrying = false, false
		r.mu.Unlock()
	}()
	setRetrying := func() {
		r.mu.Lock()
		st.retrying = len(retrying) > 0
		r.mu.Unlock()
	}
	for {
		heads, err := r.heads(name, lane)
		if err != nil {
			return err
		}
		now := time.Now()
		var next time.Time
		for _, h := range heads {
			l := lane(h.Packet)
			if busy[l] {
				continue
			}
			if t, ok := notAfter[l]; ok && now.Before(t) {
				if next.IsZero() || t.Before(next) {
					next = t
				}
				continue
			}
			delete(notAfter, l)
			attempts[h.Seq]++
			h.Attempt = attempts[h.Seq]
			busy[l] = true
			running++
			go func(d Delivery, l string) {
				results <- result{d, l, r.deliver(ctx, c, d)}
			}(h, l)
		}
		var timer <-chan time.Time
		var t *time.Timer
		if !next.IsZero() {
			t = time.NewTimer(time.Until(next))
			timer = t.C
		}
		stop := func() {
			if t != nil {
				t.Stop()
			}
		}
		select {
		case <-ctx.Done():
			stop()
			return nil
		case <-st.wake:
			stop()
		case <-timer:
		case res := <-results:
			stop()
			running--
			busy[res.lane] = false
			if ctx.Err() != nil {
				return nil
			}
			d, err := res.d, res.err
			if err == nil || IsPermanent(err) {
				r.mu.Lock()
				if derr := r.o.DB.Update(func(txn *badger.Txn) error { return txn.Delete(r.boxKey(name, d.Seq)) }); derr != nil {
					r.mu.Unlock()
					return fmt.Errorf("router: acknowledge %s to %s: %w", d.Key, name, derr)
				}
				if err == nil {
					st.delivered++
				} else {
					st.failed++
					st.lastError = err.Error()
				}
				r.mu.Unlock()
				delete(attempts, d.Seq)
				delete(retrying, res.lane)
				setRetrying()
				if err != nil {
					r.log.Warn("a packet cannot be delivered; dropped", "component", name, "key", d.Key, "channel", d.Channel, "err", err)
				}
				continue
			}
			wait := r.o.Retry.Delay(d.Attempt - 1)
			notAfter[res.lane] = time.Now().Add(wait)
			retrying[res.lane] = true
			r.mu.Lock()
			st.lastError = err.Error()
			r.mu.Unlock()
			setRetrying()
			r.log.Warn("delivery failed; retrying", "component", name, "key", d.Key, "lane", res.lane, "attempt", d.Attempt, "in", wait, "err", err)
		}
	}
}

// heads reads the oldest packet of each lane of name's outbox, oldest
// lane first.
func (r *Router) heads(name string, lane func(Packet) string) ([]Delivery, error) {
	var out []Delivery
	seen := map[string]bool{}
	err := r.o.DB.View(func(txn *badger.Txn) error {
		p := r.boxPrefix(name)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var d Delivery
			d.Seq = binary.BigEndian.Uint64(it.Item().Key()[len(p):])
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &d.Packet) }); err != nil {
				return err
			}
			l := lane(d.Packet)
			if seen[l] {
				continue
			}
			seen[l] = true
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("router: read the outbox of %s: %w", name, err)
	}
	return out, nil
}
