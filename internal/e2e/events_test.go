package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// lifeLog answers the event log's calls by their response format, calls the
// `event` tool when asked to close a matter, and otherwise chats.
func lifeLog(req llmtest.Request) llmtest.Reply {
	rf := string(req.ResponseFormat)
	switch {
	case strings.Contains(rf, "event_title"):
		return llmtest.Reply{Text: `{"title":"alice told me about her garden","importance":0.7,"includes":[]}`}
	case strings.Contains(rf, "event_summary"):
		return llmtest.Reply{Text: `{"title":"a day of gardening talk","importance":0.4}`}
	case strings.Contains(rf, "event_extraction"):
		return llmtest.Reply{Text: `{"facts":[{"object":"alice","kind":"person","text":"grows tomatoes"}],"lines":[{"a":"alice","b":"青蓝","text":"shares her garden news with me","strength":0.5}],"reinforce":[],"contradict":[]}`}
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == llm.RoleTool {
		return llmtest.Reply{Text: "noted"}
	}
	if strings.Contains(last.Content, "that's settled") {
		return llmtest.Reply{Text: "great!", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "event", Arguments: `{"op":"close","title":"alice and I settled the tomato plan"}`}}}
	}
	return llmtest.Reply{Text: "how lovely"}
}

func TestEventLogEndToEnd(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	fake.SetDefault(lifeLog)
	dir := t.TempDir()
	d := start(t, dir, env(dir, url))
	for _, text := range []string{"my tomatoes are ripe", "that's settled then"} {
		if code, out, err := d.post("/api/v1/messages", map[string]string{"channel": "garden", "user": "alice", "text": text}); err != nil || code != 200 {
			t.Fatalf("post %q: %d %v %v", text, code, out, err)
		}
	}
	// The model closed the matter with the event tool; its result went back.
	var toolResult string
	for _, r := range fake.Requests() {
		for _, m := range r.Messages {
			if m.Role == llm.RoleTool {
				toolResult = m.Content
			}
		}
	}
	if !strings.Contains(toolResult, "closed the topic") {
		t.Fatalf("event tool result %q", toolResult)
	}
	// The model is offered both tools.
	var offered []string
	for _, r := range fake.Requests() {
		if len(r.Tools) > 0 {
			for _, tl := range r.Tools {
				offered = append(offered, tl.Name)
			}
			break
		}
	}
	if !slices.Contains(offered, "event") || !slices.Contains(offered, "theory") {
		t.Fatalf("tools offered %v", offered)
	}

	// Two days later, every due rollup runs.
	later := time.Now().Add(48 * time.Hour).Format(time.RFC3339)
	stdout, stderr, rc := cli(t, d.cliEnv(), "", "events", "rollup", "--now", later)
	if rc != 0 || !strings.Contains(stdout, "wrote day") {
		t.Fatalf("events rollup: rc=%d\n%s%s", rc, stdout, stderr)
	}
	stdout, stderr, rc = cli(t, d.cliEnv(), "", "events", "ls", "--json")
	if rc != 0 {
		t.Fatalf("events ls --json: %d %s", rc, stderr)
	}
	var list struct {
		Events []struct {
			Level    string `json:"level"`
			Title    string `json:"title"`
			ClosedBy string `json:"closed_by"`
			Source   struct {
				Channel string `json:"channel"`
			} `json:"source"`
			Children []string `json:"children"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("events ls --json: %v\n%s", err, stdout)
	}
	levels := map[string]int{}
	for _, e := range list.Events {
		levels[e.Level]++
		if e.Level == "event" && (e.Title != "alice and I settled the tomato plan" || e.ClosedBy != "tool" || e.Source.Channel != "garden") {
			t.Fatalf("event record %+v", e)
		}
		if e.Level == "day" && len(e.Children) != 1 {
			t.Fatalf("day record %+v", e)
		}
	}
	if levels["event"] != 1 || levels["day"] < 1 {
		t.Fatalf("records by level %v\n%s", levels, stdout)
	}
	stdout, _, rc = cli(t, d.cliEnv(), "", "events", "ls", "--level", "day")
	if rc != 0 || !strings.Contains(stdout, "a day of gardening talk") || !strings.Contains(stdout, "LABEL") {
		t.Fatalf("events ls --level day: %d\n%s", rc, stdout)
	}
	stdout, _, rc = cli(t, d.cliEnv(), "", "objects", "ls")
	if rc != 0 || !strings.Contains(stdout, "青蓝 (agent)") || !strings.Contains(stdout, "alice (person)") || !strings.Contains(stdout, "grows tomatoes") {
		t.Fatalf("objects ls: %d\n%s", rc, stdout)
	}
	stdout, _, rc = cli(t, d.cliEnv(), "", "relations", "ls")
	if rc != 0 || !strings.Contains(stdout, "shares her garden news with me") {
		t.Fatalf("relations ls: %d\n%s", rc, stdout)
	}

	// The next turn sees the record and who is here in its system prompt,
	// and its context starts at the previous topic.
	if code, out, err := d.post("/api/v1/messages", map[string]string{"channel": "garden", "user": "alice", "text": "guess what"}); err != nil || code != 200 {
		t.Fatalf("post: %d %v %v", code, out, err)
	}
	var sys string
	for _, r := range fake.Requests() {
		if r.ResponseFormat == nil && len(r.Messages) > 0 && r.Messages[0].Role == llm.RoleSystem {
			sys = r.Messages[0].Content
		}
	}
	if !strings.Contains(sys, "# Recent event records") || !strings.Contains(sys, "alice and I settled the tomato plan") || !strings.Contains(sys, "alice: grows tomatoes") {
		t.Fatalf("system prompt:\n%s", sys)
	}
	_, out, _ := d.get("/api/v1/trace/last?channel=garden")
	ctx := out["packet"].(map[string]any)["context"].(map[string]any)
	if ctx["start"] == nil || ctx["start"] == "" {
		t.Fatalf("context has no start: %v", ctx)
	}
}
