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
