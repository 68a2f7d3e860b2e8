package daemon

import (
	"context"

	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/recall"
)

// findTheories asks the recall index which theories a topic touches.
func findTheories(ctx context.Context, idx *recall.Index, q events.TheoryQuery) ([]events.TheoryMatch, error) {
	if idx == nil {
		return nil, nil
	}
	ms, err := idx.MatchRecords(ctx, recall.MatchQuery{Text: q.Text, Kind: packets.RecordTheory, Channel: q.Channel, Owner: q.Owner, Limit: q.Limit})
	out := make([]events.TheoryMatch, len(ms))
	for i, m := range ms {
		out[i] = events.TheoryMatch{ID: m.ID, Score: m.Score, Shared: m.Shared}
	}
	return out, err
}

// historyRanges numbers the event log's runs as recall numbers history.
func historyRanges(ctx context.Context, idx *recall.Index, channel string, runs []events.Run) ([][]string, error) {
	in := make([]recall.Run, len(runs))
	for i, r := range runs {
		in[i] = recall.Run{First: r.First, Last: r.Last}
	}
	rs, err := idx.HistoryRanges(ctx, channel, in)
	if err != nil {
		return nil, err
	}
	out := make([][]string, len(rs))
	for i, r := range rs {
		for _, x := range r {
			out[i] = append(out[i], x.String())
		}
	}
	return out, nil
}

// eventsAccount is the budget account of the event log's background work
// (titling topics, extracting facts, rollups).
const eventsAccount = "event-log"
