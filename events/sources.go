package events

import (
	"context"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/turn"
)

// Sources are the log's parts of a turn's prompt: the events slot
// (Section) and its part of the pulled-info area (TopicTheories), each
// shown as reader (the tools' registry) says the turn's caller may read
// knowledge.
func (l *Log) Sources(reader func(packets.Caller) packets.Reader) (events, theories turn.Source) {
	query := func(q turn.Query) SectionQuery {
		return SectionQuery{Channel: q.Channel, Speaker: q.Speaker, SpeakerID: q.SpeakerID, Now: q.Now, Reader: readerOf(q, reader)}
	}
	events = turn.SourceFunc(func(ctx context.Context, q turn.Query, budget int, count func(string) int) (turn.Section, error) {
		return l.Section(ctx, query(q), budget, count)
	})
	theories = turn.SourceFunc(func(ctx context.Context, q turn.Query, budget int, count func(string) int) (turn.Section, error) {
		return l.TopicTheories(ctx, query(q), budget, count)
	})
	return events, theories
}

// readerOf is the reader the turn carries (resolved once when it started),
// else the one its caller resolves to.
func readerOf(q turn.Query, resolve func(packets.Caller) packets.Reader) packets.Reader {
	if q.Reader != nil {
		return *q.Reader
	}
	return resolve(q.Caller(""))
}
