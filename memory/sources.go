package memory

import (
	"context"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/turn"
)

// Sources fill the workspace, pulled-info and plan slots of a turn's
// prompt. resolve is the tools' registry: it says who the turn's caller
// is, so the workspace and the plans are the ones that caller may see —
// its channel's, and the owner's from other conversations when the owner
// talks in private (ViewerOf). The pulled-info area is the workspace's
// (SPEC §2 item 6): what its tools and the recall tool pulled into the
// channel, escaped, newest kept when the budget is short.
func (m *Memory) Sources(resolve func(packets.Caller) *packets.ToolCall) map[turn.Slot]turn.Source {
	viewer := func(q turn.Query) Viewer {
		if q.Reader != nil { // resolved once when the turn started
			return viewerOf(*q.Reader)
		}
		return ViewerOf(resolve(q.Caller("")))
	}
	return map[turn.Slot]turn.Source{
		turn.SlotWorkspace: turn.SourceFunc(func(_ context.Context, q turn.Query, budget int, _ func(string) int) (turn.Section, error) {
			body, items := m.WorkspaceSection(viewer(q), budget)
			return turn.Section{Body: body, Items: items}, nil
		}),
		turn.SlotPulled: turn.SourceFunc(func(_ context.Context, q turn.Query, budget int, _ func(string) int) (turn.Section, error) {
			body, items := m.PulledSection(q.Channel, budget)
			return turn.Section{Body: body, Items: items}, nil
		}),
		turn.SlotPlans: turn.SourceFunc(func(_ context.Context, q turn.Query, _ int, _ func(string) int) (turn.Section, error) {
			return turn.Section{Body: m.PlansSection(viewer(q))}, nil
		}),
	}
}
