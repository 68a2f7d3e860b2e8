package mainvirtual

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// memoryTools offers remember as cyan's workspace does and keeps what it
// is asked to remember; bad arguments are its refusal, as the registry's.
type memoryTools struct {
	mu    sync.Mutex
	facts []string
	calls int
}

func (m *memoryTools) Offer(turn.Query) []llm.Tool {
	return []llm.Tool{{Name: "remember", Description: "Remember something for good.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to remember"}},"required":["text"]}`)}}
}

func (m *memoryTools) Call(_ context.Context, _ turn.Query, c llm.ToolCall) turn.ToolResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	var a struct {
		Text string `json:"text"`
	}
	if c.Name != "remember" {
		return turn.ToolResult{Text: "no such tool", IsError: true}
	}
	if err := json.Unmarshal([]byte(c.Arguments), &a); err != nil || a.Text == "" {
		return turn.ToolResult{Text: "error: bad arguments", IsError: true}
	}
	m.facts = append(m.facts, a.Text)
	return turn.ToolResult{Text: "remembered"}
}

func TestSmallModelMistakesRepaired(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		fact  string
		note  string
	}{
		{"unclosed JSON", llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "remember", Arguments: `{"text": "my sister's birthday is May 3`}}}, "my sister's birthday is May 3", "closed the unclosed JSON"},
		{"a list of one", llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "remember", Arguments: `{"text": ["my sister's birthday is May 3"]}`}}}, "my sister's birthday is May 3", "a list of one"},
		{"a number", llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "remember", Arguments: `{"text": 42}`}}}, "42", "the string \"42\""},
		{"an alias", llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "save_memory", Arguments: `{"text": "my sister's birthday is May 3"}`}}}, "my sister's birthday is May 3", `called as "save_memory"`},
		{"a fenced call", llmtest.Reply{Text: "记下了。\n```json\n{\"name\": \"remember\", \"arguments\": {\"text\": \"my sister's birthday is May 3\"}}\n```"}, "my sister's birthday is May 3", "```json fence"},
		{"a raw tool_call tag", llmtest.Reply{Text: "<tool_call>\n{\"name\": \"remember\", \"arguments\": {\"text\": \"my sister's birthday is May 3\"}}\n</tool_call>"}, "my sister's birthday is May 3", "<tool_call> tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := &memoryTools{}
			r := newRig(t, func(o *Options) { o.Tools = mem; o.Agent.MaxToolSteps = 3 })
			r.fake.Enqueue(tt.reply, llmtest.Reply{Text: "记下了"})
			res := r.turn(t, "alice", "remember: my sister's birthday is May 3")
			if len(mem.facts) != 1 || mem.facts[0] != tt.fact {
				t.Fatalf("facts stored = %q, want %q once", mem.facts, tt.fact)
			}
			st := res.Trace.Steps[0]
			if !strings.Contains(strings.Join(st.Repairs, "; "), tt.note) {
				t.Errorf("the trace's repairs %q lack %q", st.Repairs, tt.note)
			}
			for _, m := range res.Replies {
				if strings.Contains(m.Text, "```") || strings.Contains(m.Text, "tool_call") {
					t.Errorf("the call written as text reached the reply: %q", m.Text)
				}
			}
		})
	}
}

// Arguments past repair: the tool does not run, the model reads one
// instruction without a contradiction, and the user's message — the fact
// — is stored where recall finds it.
func TestUnrepairableArgumentsOneInstruction(t *testing.T) {
	mem := &memoryTools{}
	r := newRig(t, func(o *Options) { o.Tools = mem; o.Agent.MaxToolSteps = 3 })
	r.fake.Enqueue(llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "remember", Arguments: `text: my sister's birthday`}}}, llmtest.Reply{Text: "sorry"})
	res := r.turn(t, "alice", "remember: my sister's birthday is May 3")
	if mem.calls != 0 {
		t.Fatalf("the tool ran %d times on unreadable arguments", mem.calls)
	}
	result := res.Trace.Steps[0].Results[0]
	if !result.IsError || !strings.Contains(result.Text, "once more") || strings.Contains(strings.ToLower(result.Text), "do not retry") {
		t.Errorf("tool result = %q", result.Text)
	}
	msgs, err := r.store.Recent("home", store.Window{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range msgs {
		found = found || m.Role == store.RoleUser && strings.Contains(m.Text, "birthday is May 3")
	}
	if !found {
		t.Error("the user's message is not stored")
	}
}

func TestCloseJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"text": "abc`, `{"text": "abc"}`},
		{`{"a": [1, 2`, `{"a": [1, 2]}`},
		{`{"a": {"b": "c"`, `{"a": {"b": "c"}}`},
		{`{"a": "x",`, `{"a": "x"}`},
		{`{"a": "x\`, `{"a": "x\\"}`},
	}
	for _, tt := range tests {
		got, ok := closeJSON(tt.in)
		if !ok || got != tt.want {
			t.Errorf("closeJSON(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	for _, bad := range []string{`{"a": 1}`, `[1`, `{"a": ]`, `text`} {
		if got, ok := closeJSON(bad); ok {
			t.Errorf("closeJSON(%q) = %q; want no repair", bad, got)
		}
	}
}

func FuzzRepairCalls(f *testing.F) {
	f.Add(`{"text": "abc`, "```json\n{\"name\": \"remember\", \"arguments\": {\"text\": 1}}\n```")
	f.Add(`{"text": ["x"]}`, "<tool_call>{\"name\":\"save_memory\",\"arguments\":\"{\\\"text\\\":\\\"y\\\"}\"}</tool_call>")
	f.Add(`{"a":[{"b":"\`, "")
	tools := (&memoryTools{}).Offer(turn.Query{})
	f.Fuzz(func(t *testing.T, args, content string) {
		resp := &llm.Response{Content: content}
		if args != "" {
			resp.ToolCalls = []llm.ToolCall{{ID: "c", Name: "remember", Arguments: args}}
		}
		calls, _, notes := repairCalls(resp, tools)
		for _, c := range calls {
			if len(notes) > 0 && c.Name == "remember" && !argsReadable(c.Arguments) && strings.Contains(strings.Join(notes, ";"), "closed") {
				t.Fatalf("a repair left unreadable arguments: %q", c.Arguments)
			}
		}
		if s, ok := closeJSON(args); ok && !strings.HasPrefix(s, args[:min(len(args), 1)]) {
			t.Fatalf("closeJSON changed the beginning: %q", s)
		}
	})
}
