package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// everyVerbLLM answers each of the daemon's scripted steps by its response
// format, and otherwise chats.
func everyVerbLLM(req llmtest.Request) llmtest.Reply {
	rf := string(req.ResponseFormat)
	switch {
	case strings.Contains(rf, "remember"):
		return llmtest.Reply{Text: `{"action":"add","kind":"note","content":"hareru's cat is named nyalia"}`}
	case strings.Contains(rf, "recall_filter"):
		return llmtest.Reply{Text: `{"keep":[1],"give_up":false}`}
	case strings.Contains(rf, "recall_summary"):
		return llmtest.Reply{Text: `{"summarized_info":"she talked about her cat"}`}
	case strings.Contains(rf, "compress"):
		return llmtest.Reply{Text: `{"summary":"short"}`}
	case strings.Contains(rf, "event_extraction") && strings.Contains(fmt.Sprint(req.Messages), "bob"):
		return llmtest.Reply{Text: `{"facts":[{"object":"alice","kind":"person","text":"has ripe tomatoes, says bob"}],"lines":[],"reinforce":[],"contradict":[]}`}
	case strings.Contains(rf, "event_"):
		return lifeLog(req)
	}
	if last := req.Messages[len(req.Messages)-1]; last.Role == llm.RoleTool {
		return llmtest.Reply{Text: "noted"}
	}
	return llmtest.Reply{Text: "ok"}
}

// TestEveryVerbPrintsJSON runs every verb of the command table that takes
// --json — the table is read from the real binary (cyan help --json), so a
// new verb is run the day it is added — against a running daemon that
// holds something of each kind, and checks it exits 0 and prints one valid
// JSON document. A verb runs with its table example unless it needs
// something only this test can name (an id, a file); the recipes below
// give those.
func TestEveryVerbPrintsJSON(t *testing.T) {
	t.Parallel()
	d, fake, work := toolsDaemon(t, "limits:\n  messages_per_minute: 0\n")
	fake.SetDefault(everyVerbLLM)
	scratch := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(scratch, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// A workspace item and a generate trace: the owner's turn remembers.
	fake.Enqueue(llmtest.Reply{Text: "好", ToolCalls: []llm.ToolCall{{ID: "r1", Name: "remember", Arguments: `{"text":"my cat is named nyalia"}`}}})
	if code, out, err := d.post("/api/v1/messages", map[string]string{"channel": "home", "user": "hareru", "text": "my cat is nyalia, remember"}); err != nil || code != 200 {
		t.Fatalf("post: %d %v %v", code, out, err)
	}
	waitTurn(t, d, 1)
	_, mem, _ := d.get("/api/v1/memory")
	items, _ := mem["items"].([]any)
	if len(items) == 0 {
		t.Fatalf("no workspace item: %v", mem)
	}
	item := items[0].(map[string]any)["id"].(string)
	_, traces, _ := d.get("/api/v1/traces?last=1")
	tl, _ := traces["traces"].([]any)
	if len(tl) == 0 {
		t.Fatalf("no generate trace: %v", traces)
	}
	trace := tl[0].(map[string]any)["id"].(string)

	// A group's fact about someone, for objects confirm.
	if code, out, _ := d.post("/api/v1/messages", map[string]string{"channel": "qq:group:7", "kind": "group", "user": "bob", "text": "alice's tomatoes are ripe"}); code != 200 {
		t.Fatalf("group post: %d %v", code, out)
	}
	later := time.Now().Add(48 * time.Hour).Format(time.RFC3339)
	if code, out, _ := d.post("/api/v1/events/rollup", map[string]string{"now": later}); code != 200 {
		t.Fatalf("rollup: %d %v", code, out)
	}
	_, objs, _ := d.get("/api/v1/objects")
	var object, block string
	for _, o := range objs["objects"].([]any) {
		om := o.(map[string]any)
		for _, b := range om["blocks"].([]any) {
			bm := b.(map[string]any)
			if sc, _ := bm["provenance"].(map[string]any)["scope"].(map[string]any); sc["channel"] == "qq:group:7" && sc["owner"] != true {
				object, block = om["id"].(string), bm["id"].(string)
			}
		}
	}
	if block == "" {
		t.Fatalf("no group block to confirm: %v", objs)
	}

	// Two calls waiting for the owner: one to allow, one to deny.
	var parked []string
	for i := range 2 {
		args := map[string]string{"path": filepath.Join(work, "note"+string(rune('a'+i))+".txt"), "content": "x"}
		code, out, _ := d.post("/api/v1/tools/write_file/run", map[string]any{"arguments": args})
		if code != 202 {
			t.Fatalf("write_file was not parked: %d %v", code, out)
		}
		parked = append(parked, out["approval"].(string))
	}
	notes := filepath.Join(work, "notes.txt")
	if err := os.WriteFile(notes, []byte("buy milk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	card := write("ember.json", emberCard)
	persona := filepath.Join(scratch, "ember")
	// Three days old: an older history has the event log roll up every
	// empty period since, to today, once the import is final.
	history := write("history.jsonl", fmt.Sprintf(`{"time": %q, "channel": "home", "user": "hareru", "text": "the physics exam is next friday"}`+"\n",
		time.Now().UTC().Add(-72*time.Hour).Format(time.RFC3339)))
	locomo, _ := filepath.Abs(filepath.Join("..", "..", "events", "testdata", "locomo-mini.json"))

	recipes := map[string][]string{
		"import":          {history},
		"trace show":      {trace},
		"memory show":     {item},
		"memory curve":    {item},
		"memory forget":   {item},
		"tool run":        {"read_file", `{"path": "` + notes + `"}`},
		"approvals allow": {parked[0]},
		"approvals deny":  {parked[1]},
		"objects confirm": {object, block},
		"script run":      {"compress", "--input", `{"text": "a long reply"}`},
		"script check":    {"compress"},
		"persona import":  {card, "--out", persona},
		"persona export":  {persona, "--out", filepath.Join(scratch, "ember.png")},
		"persona use":     {"default"},
		"bench locomo":    {locomo},
		"bench recall":    {"--messages", "300", "--queries", "5", "--settle", "10ms"},
		"bench crash":     {"--cycles", "1"},
		"recall":          {"--mode", "tool", "cat"},
	}

	stdout, stderr, rc := cli(t, d.cliEnv(), "", "help", "--json")
	var table struct {
		Commands []struct {
			Command string   `json:"command"`
			JSON    bool     `json:"json"`
			Example []string `json:"example"`
		} `json:"commands"`
	}
	if rc != 0 || json.Unmarshal([]byte(stdout), &table) != nil || len(table.Commands) < 30 {
		t.Fatalf("cyan help --json: rc=%d %s\n%s", rc, stderr, stdout)
	}
	ran := map[string]bool{}
	for _, c := range table.Commands {
		if !c.JSON {
			continue
		}
		args, ok := recipes[c.Command]
		if !ok {
			args = c.Example
		}
		ran[c.Command] = true
		argv := append(append(strings.Fields(c.Command), args...), "--json")
		stdout, stderr, rc := cli(t, d.cliEnv(), "", argv...)
		if c.Command == "doctor" {
			var rep struct{ OK bool }
			if !json.Valid([]byte(stdout)) || json.Unmarshal([]byte(stdout), &rep) != nil || rep.OK != (rc == 0) {
				t.Errorf("cyan %s: rc=%d, not one JSON document that agrees with the exit status\n%s\n%s", strings.Join(argv, " "), rc, stdout, stderr)
			}
			continue
		}
		if rc != 0 || !json.Valid([]byte(stdout)) {
			t.Errorf("cyan %s: rc=%d, want 0 and one JSON document (give the verb a working example, or a recipe here)\nstdout: %s\nstderr: %s",
				strings.Join(argv, " "), rc, stdout, stderr)
		}
	}
	for name := range recipes {
		if !ran[name] {
			t.Errorf("the recipe for %q names no verb that takes --json", name)
		}
	}
	if len(ran) < 30 {
		t.Errorf("only %d verbs print JSON", len(ran))
	}
	// What the JSON said happened did happen.
	if b, err := os.ReadFile(filepath.Join(work, "notea.txt")); err != nil || string(b) != "x" {
		t.Errorf("approvals allow did not run the call: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(work, "noteb.txt")); err == nil {
		t.Error("approvals deny ran the call")
	}
	if code, _, _ := d.get("/api/v1/memory/" + item); code != 404 {
		t.Errorf("memory forget --json left the item: %d", code)
	}
}
