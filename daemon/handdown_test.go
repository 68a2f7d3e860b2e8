package daemon

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/clocktest"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// TestPermissionsHandDown: the owner lists one distribute_permission
// preset; a persona observer that declares another is not loaded, one
// that declares the preset is, and a plan that observer makes fires
// under the observer's permission — its turn is offered the observer's
// tools (speak, plan), not the owner's (terminal, recall …).
func TestPermissionsHandDown(t *testing.T) {
	const preset = `{"tools": ["speak", "plan"], "infos": ["history:channel:home"], "self_edit": ["memory:**"]}`
	files := map[string]string{
		"persona/persona.md": "---\nname: Tester\n---\nYou are ${agent_name}.\n",
		"persona/observers/stretcher.yaml": "name: stretcher\ntriggers: [{on: AfterAIResponse}]\nprompt: plan a stretch\nchannels: [home]\n" +
			"permission: " + preset + "\n",
		"persona/observers/greedy.yaml": "name: greedy\ntriggers: [{on: AfterAIResponse}]\nprompt: anything\nchannels: [home]\n" +
			`permission: {"tools": ["*"], "infos": ["**"]}` + "\n",
		"cyan.yaml": "persona: persona\npermissions:\n  owner: {\"tools\": [\"*\"], \"infos\": [\"**\"], \"self_edit\": [\"memory:**\"], \"distribute_permission\": [" + preset + "]}\n",
	}
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.Local)
	due := t0.Add(time.Hour)
	clock := clocktest.New(t0)
	fake := new(llmtest.Server)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	dir := t.TempDir()
	env := map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "CYAN_ADDR": "127.0.0.1:0",
		"CYAN_LLM_BASE_URL": srv.URL + "/v1", "CYAN_LLM_MODEL": "fake-model"}
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if name == "cyan.yaml" {
			env["CYAN_CONFIG"] = p
		}
	}
	var mu sync.Mutex
	var planned bool
	var dueTools []string
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.Contains(req.System, `as its observer "stretcher"`):
			mu.Lock()
			defer mu.Unlock()
			if planned {
				return llmtest.Reply{Text: `{"speak": false, "note": ""}`}
			}
			planned = true
			return llmtest.Reply{Text: `{"speak": true, "note": "plan a stretch"}`}
		case strings.Contains(last, "Plan p1 is due"):
			mu.Lock()
			for _, tl := range req.Tools {
				dueTools = append(dueTools, tl.Name)
			}
			mu.Unlock()
			return llmtest.Reply{Text: "time to stretch!"}
		case strings.Contains(last, "Observer stretcher suggests"):
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "p", Name: "plan",
				Arguments: fmt.Sprintf(`{"op":"create","text":"remind alice to stretch","at":%q}`, due.Format(time.RFC3339))}}}
		}
		return llmtest.Reply{Text: "<empty_reply>"}
	})
	r := &rig{t: t, fake: fake, clock: clock, env: env}
	r.start()
	defer r.stop()
	for deadline := time.Now().Add(10 * time.Second); !r.d.obs.m.Has("stretcher") && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond) // the persona folder loads as the daemon starts
	}
	if r.d.obs.m.Has("greedy") || !r.d.obs.m.Has("stretcher") {
		t.Fatalf("loaded: greedy %v, stretcher %v", r.d.obs.m.Has("greedy"), r.d.obs.m.Has("stretcher"))
	}
	c := r.follow("home", "")
	defer c.close()
	r.say("home", "hi")
	for deadline := time.Now().Add(20 * time.Second); !r.d.obs.m.Has("plan:p1") || !r.d.obs.m.Idle(); {
		if time.Now().After(deadline) {
			t.Fatal("the observer's plan was not scheduled")
		}
		time.Sleep(5 * time.Millisecond) // polling the observers, whose time stands still
	}
	clock.Set(due)
	for {
		got, _ := c.next(t, 1)
		if fmt.Sprint(got) == "[time to stretch!]" {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(dueTools)
	if fmt.Sprint(dueTools) != "[plan speak]" {
		t.Fatalf("the due plan's turn was offered %v, want the observer's [plan speak]", dueTools)
	}
}
