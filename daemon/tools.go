package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/memory"
)

// toolSet offers main-virtual the tools of the parts (the workspace's now)
// and runs their calls.
type toolSet struct {
	mem *memory.Memory
}

var _ mainvirtual.Tools = toolSet{}

func (t toolSet) Offer(q mainvirtual.Query) []llm.Tool {
	var out []llm.Tool
	for _, x := range t.mem.Tools(q.Channel) {
		out = append(out, llm.Tool{Name: x.Name, Description: x.Description, Parameters: x.Parameters})
	}
	return out
}

func (t toolSet) Call(ctx context.Context, q mainvirtual.Query, c llm.ToolCall) mainvirtual.ToolResult {
	for _, x := range t.mem.Tools(q.Channel) {
		if x.Name != c.Name {
			continue
		}
		out, err := x.Run(ctx, memory.Call{Channel: q.Channel, Speaker: q.Speaker, Kind: q.Kind, MessageID: q.MessageID, Arguments: []byte(c.Arguments)})
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return mainvirtual.ToolResult{Text: "the call was cut short", IsError: true}
			}
			return mainvirtual.ToolResult{Text: "error: " + err.Error(), IsError: true}
		}
		return mainvirtual.ToolResult{Text: out}
	}
	return mainvirtual.ToolResult{Text: fmt.Sprintf("there is no tool named %q here", c.Name), IsError: true}
}

// memorySources fills the workspace, pulled-info and plan slots.
func memorySources(mem *memory.Memory) map[mainvirtual.Slot]mainvirtual.Source {
	return map[mainvirtual.Slot]mainvirtual.Source{
		mainvirtual.SlotWorkspace: mainvirtual.SourceFunc(func(_ context.Context, q mainvirtual.Query, budget int, _ func(string) int) (mainvirtual.Section, error) {
			body, items := mem.WorkspaceSection(q.Channel, budget)
			sec := mainvirtual.Section{Body: body}
			for _, it := range items {
				sec.Items = append(sec.Items, mainvirtual.ItemTrace{ID: it.ID, Tokens: it.Tokens, Included: it.Included, Reason: it.Reason})
			}
			return sec, nil
		}),
		mainvirtual.SlotPulled: mainvirtual.SourceFunc(func(_ context.Context, q mainvirtual.Query, _ int, _ func(string) int) (mainvirtual.Section, error) {
			return mainvirtual.Section{Body: mem.PulledSection(q.Channel)}, nil
		}),
		mainvirtual.SlotPlans: mainvirtual.SourceFunc(func(_ context.Context, q mainvirtual.Query, _ int, _ func(string) int) (mainvirtual.Section, error) {
			return mainvirtual.Section{Body: mem.PlansSection(q.Channel)}, nil
		}),
	}
}
