package daemon

import (
	"context"

	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/tools"
)

// eventsSource fills main-virtual's events slot from the event log, as
// the turn's caller may see it.
func eventsSource(log *events.Log, reg *tools.Registry) mainvirtual.Source {
	return mainvirtual.SourceFunc(func(ctx context.Context, q mainvirtual.Query, budget int, count func(string) int) (mainvirtual.Section, error) {
		s, err := log.Section(ctx, events.SectionQuery{Channel: q.Channel, Speaker: q.Speaker, SpeakerID: q.SpeakerID, Now: q.Now,
			Reader: reg.Reader(q.Caller(""))}, budget, count)
		if err != nil {
			return mainvirtual.Section{}, err
		}
		return mainvirtual.Section{Body: s.Body, Note: s.Note, Items: s.Items}, nil
	})
}

// topicTheories is the event log's part of the pulled-info area: the
// theories the current topic touches, as the turn's reader may see them.
func topicTheories(log *events.Log, reg *tools.Registry) mainvirtual.Source {
	return mainvirtual.SourceFunc(func(ctx context.Context, q mainvirtual.Query, budget int, count func(string) int) (mainvirtual.Section, error) {
		s, err := log.TopicTheories(ctx, events.SectionQuery{Channel: q.Channel, Speaker: q.Speaker, SpeakerID: q.SpeakerID, Now: q.Now,
			Reader: reg.Reader(q.Caller(""))}, budget, count)
		return mainvirtual.Section{Body: s.Body, Note: s.Note, Items: s.Items}, err
	})
}

// findTheories asks the recall index which theories a topic touches.
func findTheories(ctx context.Context, idx *recall.Index, q events.TheoryQuery) ([]events.TheoryMatch, error) {
	if idx == nil {
		return nil, nil
	}
	ms, err := idx.MatchRecords(ctx, recall.MatchQuery{Text: q.Text, Kind: recall.KindTheory, Channel: q.Channel, Owner: q.Owner, Limit: q.Limit})
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
