package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
	"github.com/cyan-agent/cyan/llm"
)

// rememberFacts are facts that differ from one another by one term: a
// one-character word, a digit between CJK characters, a name, the order
// of the words. Each must be its own item.
var rememberFacts = []string{
	"dentist appointment on friday at 3 pm",
	"dentist appointment on friday at 4 pm",
	"我家有3只猫",
	"我家有4只猫",
	"codename 1",
	"codename 2",
	"codename 6",
	"bob's phone number is 555-1234",
	"carol's phone number is 555-1234",
	"bob owes alice 20 dollars",
	"alice owes bob 20 dollars",
	"猫を3匹飼っている",
	"猫を4匹飼っている",
	// Signs and symbols are part of the fact.
	"my timezone is UTC+8",
	"my timezone is UTC-8",
	"the freezer is at -18 degrees",
	"the freezer is at 18 degrees",
	"bob writes C++",
	"bob writes C",
	"the ticket costs $50",
	"the ticket costs ¥50",
	"add 3/4 cup of flour",
	"add 3.4 cup of flour",
	"冰箱是-18度",
	"冰箱是18度",
	"bob's answer was 👍",
	"bob's answer was 👎",
}

var stepCandidate = regexp.MustCompile(`"id":\s*"(w\d+)"`)

// rememberModel plays the companion's model for TestRememberKeepsEveryFact:
// a turn "please remember: X" calls remember with X, the remember step
// answers as the model under test ("same": strengthen the first item it
// is shown; "add": add, in a wording of its own), and the turn ends with
// a plain answer once the tool has answered.
func rememberModel(mode string) func(llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		if scripttest.FormatName(req) == "remember" {
			if mode == "supersede" {
				id := "w1"
				for _, m := range req.Messages {
					if g := stepCandidate.FindStringSubmatch(m.Content); g != nil {
						id = g[1]
						break
					}
				}
				return llmtest.Reply{Text: fmt.Sprintf(`{"action": "supersede", "kind": "note", "content": "", "id": %q}`, id)}
			}
			if mode == "add" {
				return llmtest.Reply{Text: `{"action": "add", "kind": "note", "content": "a new fact"}`}
			}
			id := "w1"
			for _, m := range req.Messages {
				if g := stepCandidate.FindStringSubmatch(m.Content); g != nil {
					id = g[1]
					break
				}
			}
			return llmtest.Reply{Text: fmt.Sprintf(`{"action": "strengthen", "kind": "note", "content": "the same", "id": %q}`, id)}
		}
		if len(req.Messages) == 0 {
			return llmtest.Reply{Text: "ok"}
		}
		last := req.Messages[len(req.Messages)-1]
		if _, fact, ok := strings.Cut(last.Content, "please remember: "); ok && last.Role == "user" {
			args, _ := json.Marshal(map[string]string{"text": fact})
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "r", Name: "remember", Arguments: string(args)}}}
		}
		return llmtest.Reply{Text: "noted"}
	}
}

// TestRememberKeepsEveryFact: through the real binary, with a model that
// always calls the remember step's answer "the same" and one that always
// says "add", every one of facts that differ by a single term is an item
// of GET /api/v1/memory?all=1, word for word, and recall finds the
// message that said it.
func TestRememberKeepsEveryFact(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"same", "add"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			fake, url := fakeLLM(t)
			fake.SetDefault(rememberModel(mode))
			dir := t.TempDir()
			cfgFile := filepath.Join(dir, "cyan.yaml")
			os.WriteFile(cfgFile, []byte("limits:\n  messages_per_minute: 0\n"), 0o600)
			d := start(t, dir, env(dir, url, "CYAN_CONFIG="+cfgFile))
			for _, f := range rememberFacts {
				say(t, d, "home", "please remember: "+f)
			}
			var contents []string
			deadline := time.Now().Add(15 * time.Second)
			for {
				_, items := memState(t, d, true)
				contents = contents[:0]
				for _, it := range items {
					contents = append(contents, it["content"].(string))
				}
				if len(contents) >= len(rememberFacts) || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond) // the turns' tools run after the answer is posted
			}
			for _, f := range rememberFacts {
				if !containsString(contents, f) {
					t.Errorf("%q is not an item: %q", f, contents)
				}
			}
			if len(contents) != len(rememberFacts) {
				t.Errorf("%d items for %d facts: %q", len(contents), len(rememberFacts), contents)
			}
			waitIndexed(t, d)
			for _, f := range rememberFacts {
				code, out, err := d.post("/api/v1/recall", map[string]any{"prompt": f, "mode": "search", "max_results": 3})
				if err != nil || code != 200 || !strings.Contains(fmt.Sprint(out["results"]), "please remember: "+f) {
					t.Errorf("recall %q: %d %v %v", f, code, out["results"], err)
				}
			}
		})
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRememberChangedFactKeepsHistory: through the real binary, "the
// dentist moved to 4 pm" after "dentist at 3 pm" (the remember step says
// supersede; the words confirm it) makes the 4 pm item current and keeps
// the 3 pm one as what was, with the time it stopped holding: the next
// prompt's workspace shows "(was dentist at 3 pm, until …)", `cyan memory
// show` prints the history, recall finds both messages, and the export
// keeps both items.
func TestRememberChangedFactKeepsHistory(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	fake.SetDefault(rememberModel("supersede"))
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "cyan.yaml")
	os.WriteFile(cfgFile, []byte("limits:\n  messages_per_minute: 0\n"), 0o600)
	d := start(t, dir, env(dir, url, "CYAN_CONFIG="+cfgFile))
	const was, now = "dentist at 3 pm", "the dentist moved to 4 pm"
	say(t, d, "home", "please remember: "+was)
	say(t, d, "home", "please remember: "+now)
	var items map[string]map[string]any
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, items = memState(t, d, true)
		if w2, ok := items["w2"]; (ok && w2["supersedes"] == "w1") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the turns' tools run after the answer is posted
	}
	old, cur := items["w1"], items["w2"]
	if old == nil || cur == nil || old["content"] != was || cur["content"] != now || cur["supersedes"] != "w1" ||
		old["superseded_by"] != "w2" || old["until"] == nil || old["in_workspace"] != false || cur["in_workspace"] != true {
		t.Fatalf("items after the change: %v", items)
	}
	// The next turn's prompt shows the current value with what it was.
	say(t, d, "home", "when is the dentist?")
	reqs := fake.Requests()
	system := reqs[len(reqs)-1].System
	if !strings.Contains(system, "[w2] "+now+" (was "+was+", until ") || strings.Contains(system, "[w1]") {
		t.Errorf("the workspace in the prompt does not show the current value with its history:\n%s", system)
	}
	stdout, stderr, rc := cli(t, d.cliEnv(), "", "memory", "show", "w2")
	if rc != 0 || !strings.Contains(stdout, "was "+was+" (w1), until ") {
		t.Errorf("cyan memory show w2: rc=%d %s %s", rc, stdout, stderr)
	}
	waitIndexed(t, d)
	for _, f := range []string{was, now} {
		code, out, err := d.post("/api/v1/recall", map[string]any{"prompt": f, "mode": "search", "max_results": 3})
		if err != nil || code != 200 || !strings.Contains(fmt.Sprint(out["results"]), "please remember: "+f) {
			t.Errorf("recall %q: %d %v %v", f, code, out["results"], err)
		}
	}
	file := filepath.Join(t.TempDir(), "a.jsonl")
	if _, stderr, rc := cli(t, d.cliEnv(), "", "export", "--format", "jsonl", file); rc != 0 {
		t.Fatalf("cyan export: rc=%d %s", rc, stderr)
	}
	export, _ := os.ReadFile(file)
	for _, want := range []string{`"content":"` + was + `"`, `"superseded_by":"w2"`, `"content":"` + now + `"`, `"supersedes":"w1"`} {
		if !strings.Contains(string(export), want) {
			t.Errorf("the export lacks %s", want)
		}
	}
}
