package events

import (
	"context"

	"github.com/cyan-agent/cyan/packets"
)

// Records lists every record a search finds, now: every titled event (its
// title, under "event <label>", in its channel) and every theory (its
// article, under "theory <title>", found where its scope says: public
// ones everywhere, a conversation's there, the owner's by the owner in
// private).
func (l *Log) Records(context.Context) ([]packets.Record, error) {
	evs, err := l.Titled(l.now())
	if err != nil {
		return nil, err
	}
	ths, err := l.Theories()
	if err != nil {
		return nil, err
	}
	out := make([]packets.Record, 0, len(evs)+len(ths))
	for _, ev := range evs {
		out = append(out, packets.Record{Kind: packets.RecordEvent, ID: ev.ID, Channel: ev.Source.Channel,
			Source: "event " + ev.Label, Text: ev.Title, Time: ev.Start})
	}
	for _, th := range ths {
		s := th.ScopeOf()
		out = append(out, packets.Record{Kind: packets.RecordTheory, ID: th.ID, Channel: s.Channel, OwnerOnly: s.Owner,
			Source: "theory " + th.Title, Text: th.Article, Time: th.Updated})
	}
	return out, nil
}
