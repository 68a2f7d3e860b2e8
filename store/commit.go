package store

import (
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Group commit: the Appends that arrive while a commit is on its way to
// the disk wait for it, then one of them writes all of them in one
// transaction — one fsync for the lot — and every caller returns once the
// transaction holding its messages is durable. An acknowledged message is
// as durable as before; writers that meet at the disk share its cost
// instead of queueing for it one fsync each.

// pendingWrite is one Append's messages waiting for a commit.
type pendingWrite struct {
	msgs []*Message
	done bool
	err  error
}

// write stores msgs durably, in a commit shared with the Appends waiting
// beside it.
func (s *Store) write(msgs []*Message) error {
	w := &pendingWrite{msgs: msgs}
	s.gmu.Lock()
	s.queue = append(s.queue, w)
	for !w.done && s.committing {
		s.gcond.Wait()
	}
	if w.done {
		s.gmu.Unlock()
		return w.err
	}
	// No commit runs and w is still queued: w's caller commits the queue.
	s.committing = true
	batch := s.queue
	s.queue = nil
	s.gmu.Unlock()

	s.commit(batch)

	s.gmu.Lock()
	s.committing = false
	s.gcond.Broadcast()
	s.gmu.Unlock()
	return w.err
}

// commit writes the batch in one transaction, or — when that fails (too
// big, or one write is bad) — each write in its own, so one write's
// error is its own. It sets every write's done and err.
func (s *Store) commit(batch []*pendingWrite) {
	all := batch[0].msgs
	if len(batch) > 1 {
		all = nil
		for _, w := range batch {
			all = append(all, w.msgs...)
		}
	}
	err := s.put(all)
	if err != nil && len(batch) > 1 {
		for _, w := range batch {
			w.err = s.put(w.msgs)
		}
	} else {
		for _, w := range batch {
			w.err = err
		}
	}
	s.gmu.Lock()
	for _, w := range batch {
		w.done = true
	}
	s.gmu.Unlock()
}

// put writes msgs in one durable transaction, in order, each with the
// next arrival seq.
func (s *Store) put(msgs []*Message) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.guard.check(); err != nil { // a full disk, a removed data dir (space.go)
		return fmt.Errorf("store: append: %w", err)
	}
	seq := s.seq
	err := s.db.Update(func(txn *badger.Txn) error {
		var p putter
		for _, m := range msgs {
			seq++
			if err := p.put(txn, m, seq); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = s.guard.after()
	}
	if err != nil {
		if errors.Is(err, badger.ErrTxnTooBig) {
			return fmt.Errorf("store: append: %d messages are too many for one write: %w", len(msgs), err)
		}
		return fmt.Errorf("store: append: %w", err)
	}
	s.seq = seq
	s.noteWrite()
	return nil
}
