// Package router is the seed's router (SPEC §1, §9): it takes every
// outgoing packet of the agent — a reply, a proactive message, speech
// segments — and hands it to every component subscribed to its channel:
// the bridges (QQ, Telegram). (The page and the voice are no components:
// they follow the journal, the page through the API's stream.) Delivery
// goes through a durable outbox per component, kept in the store: in
// order, retried with backoff while the component is down or failing,
// resumed after a daemon restart, and never handed over twice once
// acknowledged.
//
// # For a component (a bridge)
//
// Subscribe once, with a name that stays the same across restarts and
// the channel patterns the component serves (package glob's syntax: "*"
// any run of characters, "?" one):
//
//	err := r.Subscribe("onebot", []string{"qq:group:*", "qq:private:*"})
//
// From then on every outgoing packet of a matching channel is kept for
// "onebot", whether the component runs or not. To receive them, run
// Attach in the component's own part (the supervisor restarts it when it
// fails); it blocks, delivering one packet at a time, oldest first, until
// ctx ends:
//
//	err := r.Attach(ctx, "onebot", router.ComponentFunc(func(ctx context.Context, d router.Delivery) error {
//		return send(ctx, d.Channel, d.Text) // nil acknowledges
//	}))
//
// A Delivery carries the Packet — Channel, Kind (KindReply, KindProactive
// or KindSpeech), Text (one "@br" part of an answer: each part is its own
// packet, Part counts them from 0), ReplyTo (the incoming message it
// answers), Proactive, Speech (the segments of a KindSpeech packet),
// Key and Time — with the outbox's Seq and the Attempt number.
//
// AttachLanes is Attach with the outbox in lanes (ByChannel: a lane per
// chat): each lane is delivered in order, one at a time, and the lanes at
// once, so one chat's retries and waits never hold up another's. The
// bridges attach so.
//
// Deliver's answer decides what happens next:
//   - nil: delivered. The packet leaves the outbox; the next one follows.
//   - Permanent(err): it can never be delivered (the chat is gone, the
//     text is refused). It leaves the outbox, counted as failed.
//   - any other error (or a panic): temporary. The same packet is offered
//     again after a backoff (1 s doubling to 1 min), and nothing after it
//     is delivered meanwhile, so order holds.
//
// Key is the idempotency key: the stored message's id (a speech packet
// adds "/speech"). A packet is acknowledged only after Deliver returns,
// so if the daemon dies in between, the packet is offered again after the
// restart with the same Key: a component that must never send twice keeps
// the keys it has sent (a bridge: the last few hundred) and acknowledges
// a repeat without sending it. Publishing a packet whose Key was
// published already does nothing.
//
// Live text: the outbox carries finished messages. A component that must
// start before the reply is finished follows the journal's ReplyDelta
// events of its channels instead (journal.Subscription with
// Filter{Kinds: {journal.ReplyDelta}, Channel: pattern}). The voice does
// so for everything it says (tts.Voice.Follow), so that a speak result is
// seen before the text the model writes after it; it has no outbox here.
// A bridge that sends voice replies takes a KindSpeech packet's Speech —
// the same packets.Segment values the voice speaks.
//
// # For the daemon
//
// Feed follows the store's arrival log (woken by the journal) and
// publishes each stored outgoing message; its cursor is kept in the store
// and moves only after the packets are in the outboxes, so a reply is
// never lost between "stored" and "delivered".
//
// Speech packets carry packets.Segment. It may import journal, backoff,
// store, glob and packets.
package router
