package mainvirtual

import (
	"testing"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/persona"
)

// TestDepthPrompt: the Character's Note goes its depth from the end, as
// its role, with the names put in.
func TestDepthPrompt(t *testing.T) {
	conv := func() []llm.Message {
		return []llm.Message{{Role: llm.RoleUser, Content: "u1"}, {Role: llm.RoleAssistant, Content: "a1"},
			{Role: llm.RoleUser, Content: "u2"}, {Role: llm.RoleAssistant, Content: "a2"}, {Role: llm.RoleUser, Content: "u3"}}
	}
	count := func(s string) int { return len(s) }
	tests := []struct {
		name string
		d    persona.DepthPrompt
		want []llm.Message
	}{
		{"system at 4", persona.DepthPrompt{Text: "${agent_name} is kind to ${user}.", Depth: 4, Role: "system"}, []llm.Message{
			{Role: llm.RoleUser, Content: "u1"}, {Role: llm.RoleSystem, Content: "Sera is kind to alice."}, {Role: llm.RoleAssistant, Content: "a1"},
			{Role: llm.RoleUser, Content: "u2"}, {Role: llm.RoleAssistant, Content: "a2"}, {Role: llm.RoleUser, Content: "u3"}}},
		{"system at 0: after the last", persona.DepthPrompt{Text: "n", Depth: 0, Role: "system"}, append(conv(), llm.Message{Role: llm.RoleSystem, Content: "n"})},
		{"deeper than the conversation: first", persona.DepthPrompt{Text: "n", Depth: 99, Role: "system"}, append([]llm.Message{{Role: llm.RoleSystem, Content: "n"}}, conv()...)},
		{"user at 0 joins the last user message", persona.DepthPrompt{Text: "n", Depth: 0, Role: "user"}, []llm.Message{
			{Role: llm.RoleUser, Content: "u1"}, {Role: llm.RoleAssistant, Content: "a1"},
			{Role: llm.RoleUser, Content: "u2"}, {Role: llm.RoleAssistant, Content: "a2"}, {Role: llm.RoleUser, Content: "u3\nn"}}},
		{"assistant at 1", persona.DepthPrompt{Text: "n", Depth: 1, Role: "assistant"}, []llm.Message{
			{Role: llm.RoleUser, Content: "u1"}, {Role: llm.RoleAssistant, Content: "a1"},
			{Role: llm.RoleUser, Content: "u2"}, {Role: llm.RoleAssistant, Content: "a2\nn"}, {Role: llm.RoleUser, Content: "u3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := withDepthPrompt(conv(), &tt.d, "Sera", "alice", count)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v", got)
			}
			for i := range got {
				if got[i].Role != tt.want[i].Role || got[i].Content != tt.want[i].Content {
					t.Fatalf("message %d: %+v, want %+v (all: %+v)", i, got[i], tt.want[i], got)
				}
			}
			if n == 0 {
				t.Error("no tokens counted")
			}
		})
	}
}
