package recall

import (
	"context"
	"log/slog"
	"time"

	"github.com/cyan-agent/cyan/packets"
)

// ReviewD is the D of the review a recall hit makes: "may be used" (SPEC
// §3: D = 0 for what an answer used, 0.7 for what it may use).
const ReviewD = 0.7

// ItemReviewer is the workspace as a recall hit reviews it: the items made
// in the turns of the given messages, as channel may see them (memory).
type ItemReviewer interface {
	ReviewFrom(channel string, messageIDs []string, d float64) ([]string, error)
}

// EventReviewer is the event log as a recall hit reviews it: the topics
// (event-level records) a channel had at the given times, and a review of
// records by id.
type EventReviewer interface {
	TopicsAt(channel string, times []time.Time) ([]string, error)
	Review(ids []string, d float64, now time.Time) ([]string, error)
}

// Reviews is how a recall hit reviews what it hits (D = ReviewD):
//
//   - a passage of the chat log reviews the workspace items made in the
//     turns of its messages (only items the channel may see) and the
//     topics its first and last messages belong to, since a topic's body
//     is its chat log;
//   - an event record that was hit is reviewed itself;
//   - a theory has no memory state: a hit on it reviews nothing.
//
// Each record or item is reviewed once per call however many passages hit
// it. A failure is logged; the recall's answer stands. Its Reviewed is the
// recall tool's ToolOptions.Reviewed.
type Reviews struct {
	Items  ItemReviewer
	Events EventReviewer
	Now    func() time.Time // nil: time.Now
	Logger *slog.Logger     // nil: discard
}

// Reviewed reviews what results hit in channel.
func (r Reviews) Reviewed(_ context.Context, channel string, rs []Result) {
	lg, now := r.Logger, r.Now
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	var msgs, eventIDs []string
	var times []time.Time
	for _, res := range rs {
		switch res.Kind {
		case KindMessages:
			msgs = append(msgs, res.MessageIDs...)
			times = append(times, res.From, res.To)
		case packets.RecordEvent:
			eventIDs = append(eventIDs, res.ID)
		}
	}
	items, err := r.Items.ReviewFrom(channel, msgs, ReviewD)
	if err != nil {
		lg.Warn("recall: reviewing workspace items failed", "channel", channel, "err", err)
	}
	topics, err := r.Events.TopicsAt(channel, times)
	if err != nil {
		lg.Warn("recall: finding the recalled topics failed", "channel", channel, "err", err)
	}
	evs, err := r.Events.Review(append(eventIDs, topics...), ReviewD, now())
	if err != nil {
		lg.Warn("recall: reviewing events failed", "channel", channel, "err", err)
	}
	lg.Debug("recall reviewed what it hit", "channel", channel, "items", items, "events", evs)
}
