package mainvirtual

import (
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
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

// TestDepthPromptInTheRequest: a persona's depth_prompt (an imported card's
// Character's Note) reaches the model at its depth, with the names put in,
// and the trace counts it.
func TestDepthPromptInTheRequest(t *testing.T) {
	p, err := persona.Default()
	if err != nil {
		t.Fatal(err)
	}
	note := *p
	note.DepthPrompt = &persona.DepthPrompt{Text: "${agent_name} never forgets ${user}'s name.", Depth: 1, Role: "system"}
	r := newRig(t, func(o *Options) { o.Persona = func() *persona.Persona { return &note } })
	r.fake.Enqueue(llmtest.Reply{Text: "Hello."}, llmtest.Reply{Text: "Again."})
	r.turn(t, "alice", "hi")
	r.turn(t, "alice", "remember me?")
	req := lastRequest(t, r.fake)
	n := len(req.Messages)
	want := note.Name + " never forgets alice's name."
	if n < 3 || req.Messages[n-2].Role != llm.RoleSystem || req.Messages[n-2].Content != want || req.Messages[n-1].Role != llm.RoleUser {
		t.Fatalf("messages: %+v", req.Messages)
	}
	tr, err := r.mv.LastTrace("home")
	if err != nil || tr.Packet == nil || tr.Packet.Context.DepthPrompt == 0 {
		t.Errorf("the trace does not count the note: %v %+v", err, tr)
	}
}
