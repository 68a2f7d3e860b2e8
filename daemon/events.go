package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
)

// eventsSource fills main-virtual's events slot from the event log.
func eventsSource(log *events.Log) mainvirtual.Source {
	return mainvirtual.SourceFunc(func(ctx context.Context, q mainvirtual.Query, budget int, count func(string) int) (mainvirtual.Section, error) {
		s, err := log.Section(ctx, events.SectionQuery{Channel: q.Channel, Speaker: q.Speaker, SpeakerID: q.SpeakerID, Now: q.Now}, budget, count)
		if err != nil {
			return mainvirtual.Section{}, err
		}
		out := mainvirtual.Section{Body: s.Body, Note: s.Note}
		for _, it := range s.Items {
			out.Items = append(out.Items, mainvirtual.ItemTrace{ID: it.ID, Tokens: it.Tokens, Included: it.Included, Reason: it.Reason})
		}
		return out, nil
	})
}

// toolSet offers plain tool values to main-virtual. It stands in for the
// tool registry, which will hold these tools with their permissions.
type toolSet struct{ tools []events.Tool }

var _ mainvirtual.Tools = toolSet{}

// Offer implements mainvirtual.Tools: every tool, every turn.
func (t toolSet) Offer(mainvirtual.Query) []llm.Tool {
	out := make([]llm.Tool, 0, len(t.tools))
	for _, tl := range t.tools {
		out = append(out, llm.Tool{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters})
	}
	return out
}

// Call implements mainvirtual.Tools; a tool's error goes back to the model.
func (t toolSet) Call(ctx context.Context, q mainvirtual.Query, call llm.ToolCall) mainvirtual.ToolResult {
	for _, tl := range t.tools {
		if tl.Name != call.Name {
			continue
		}
		out, err := tl.Run(ctx, events.Call{Channel: q.Channel, Speaker: q.Speaker, Now: q.Now}, json.RawMessage(call.Arguments))
		if err != nil {
			msg := err.Error()
			if !errors.Is(err, events.ErrInvalid) && !errors.Is(err, events.ErrNotFound) {
				msg = "the tool failed: " + msg
			}
			return mainvirtual.ToolResult{Text: msg, IsError: true}
		}
		return mainvirtual.ToolResult{Text: out}
	}
	return mainvirtual.ToolResult{Text: fmt.Sprintf("there is no tool named %q", call.Name), IsError: true}
}
