package mainvirtual

import (
	"context"
	"strings"

	"github.com/cyan-agent/cyan/turn"
)

// Stack fills one slot from several sources, in order: each gets the
// budget the ones before it left (measured by count on their bodies), and
// decides for itself how much of it to take. The bodies are joined one
// after another; the items and notes of every source go into the trace. A
// source that fails is left out and its error noted; the slot fails only
// when every source does.
// The pulled-info area is one: the theories a topic touches (the event
// log's), then what the agent pulled (the workspace's).
func Stack(sources ...turn.Source) turn.Source {
	return turn.SourceFunc(func(ctx context.Context, q turn.Query, budget int, count func(string) int) (turn.Section, error) {
		var out turn.Section
		var bodies, notes []string
		failed := 0
		var last error
		for _, src := range sources {
			s, err := src.Section(ctx, q, budget, count)
			if err != nil {
				failed, last = failed+1, err
				notes = append(notes, "left out: "+err.Error())
				continue
			}
			if s.Body != "" {
				bodies = append(bodies, s.Body)
				budget = max(0, budget-count(s.Body)-1)
			}
			if s.Note != "" {
				notes = append(notes, s.Note)
			}
			out.Items = append(out.Items, s.Items...)
		}
		if failed == len(sources) && last != nil {
			return turn.Section{}, last
		}
		out.Body = strings.Join(bodies, "\n")
		out.Note = strings.Join(notes, "; ")
		return out, nil
	})
}
