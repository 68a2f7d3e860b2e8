package mainvirtual

import (
	"context"
	"errors"
	"fmt"

	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// replyScan bounds how far TurnOnce reads after a stored message for the
// replies of its turn (they follow it: a channel's turns run one at a time).
const replyScan = 512

// TurnOnce is Turn for a message its client names with an idempotency key
// (an Idempotency-Key header, the client's own message id, a platform's
// message id). The first call stores the message, with the key as its
// external id, and answers it. A later call with the key in the channel —
// a client retrying because it never saw the answer — stores nothing:
//   - if the first call's turn stored an answer (silence included), it
//     returns those replies (Result.Replayed), calling the listener's
//     Stored and Reply as a fresh turn would;
//   - if it stored none (the daemon stopped, or the model failed, before
//     the answer), it answers the stored message now.
//
// An empty key is Turn.
func (mv *MainVirtual) TurnOnce(ctx context.Context, in turn.Incoming, key string, l turn.Listener) (*turn.Result, error) {
	if key == "" {
		return mv.Turn(ctx, in, l)
	}
	if err := store.ValidKey(key); err != nil {
		return nil, err
	}
	if err := store.ValidChannel(in.Channel); err != nil {
		return nil, err
	}
	unlock := mv.locks.lock(in.Channel)
	id, err := mv.store.LookupExternal(in.Channel, key)
	unlock()
	switch {
	case errors.Is(err, store.ErrNotFound):
		res, err := mv.turn(ctx, in, key, l)
		var de *store.DuplicateError
		if !errors.As(err, &de) {
			return res, err
		}
		id = de.ID // stored since the look-up (a bridge's own path): answer as a retry
	case err != nil:
		return nil, &turn.TurnError{Stage: "store", Err: err}
	}
	return mv.again(ctx, in, id, l)
}

// again answers a retry of the stored message id.
func (mv *MainVirtual) again(ctx context.Context, in turn.Incoming, id string, l turn.Listener) (*turn.Result, error) {
	unlock := mv.locks.lock(in.Channel)
	defer unlock()
	msg, err := mv.store.Get(id)
	if err != nil {
		return nil, &turn.TurnError{Stage: "store", Err: err}
	}
	if msg.Text != in.Text {
		return nil, fmt.Errorf("%w: the idempotency key %q names message %s, which says something else; use a new key for a new message", store.ErrInvalid, msg.ExternalID, id)
	}
	if l.Stored != nil {
		l.Stored(msg)
	}
	stored, err := mv.store.RepliesTo(msg.Channel, id, replyScan)
	if err != nil {
		return nil, &turn.TurnError{Stage: "store", Message: msg, Err: err}
	}
	res := &turn.Result{Message: msg, Replies: []*store.Message{}, Replayed: true}
	answered := false
	for _, m := range stored {
		if m.Role != store.RoleAssistant {
			continue
		}
		answered = true
		if m.Text == "" {
			continue
		}
		res.Replies = append(res.Replies, m)
		if l.Reply != nil {
			l.Reply(m)
		}
	}
	if answered {
		return res, nil
	}
	mv.log.Info("a retried message had no answer yet; answering it now", "channel", msg.Channel, "message_id", id)
	q := turn.Query{Channel: msg.Channel, Speaker: msg.User, SpeakerID: msg.UserID, Kind: msg.Kind, MessageID: msg.ID, Now: mv.now()}
	return mv.run(ctx, msg, q, l, nil)
}
