package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
)

// compressing reports whether a request is a call of the compress script.
func compressing(req llmtest.Request) bool {
	return strings.Contains(string(req.ResponseFormat), `"name":"compress"`)
}

// setupCompression writes a persona whose two newest model messages stay
// whole and a config with a small context budget, and answers every main
// call with a long reply and every compress call with a short line.
func setupCompression(t *testing.T) (*llmtest.Server, []string, string) {
	t.Helper()
	fake, url := fakeLLM(t)
	dir := t.TempDir()
	pdir := filepath.Join(dir, "persona")
	if err := os.MkdirAll(pdir, 0o700); err != nil {
		t.Fatal(err)
	}
	persona := "---\nname: Cy\nvariables:\n  context_count: 40\n  mini_full_context_count: 2\n---\nYou are ${agent_name}.\n"
	if err := os.WriteFile(filepath.Join(pdir, "persona.md"), []byte(persona), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := "persona: ./persona\nagent:\n  context_budget: 700\n  compress:\n    per_turn: 3\n    min_tokens: 20\n"
	cfgPath := filepath.Join(dir, "cyan.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	n := 0
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		if compressing(req) {
			user := req.Messages[len(req.Messages)-1].Content
			i := strings.Index(user, "reply #")
			return llmtest.Reply{Text: fmt.Sprintf(`{"summary": "gave %s"}`, strings.Fields(user[i:])[1])}
		}
		n++
		return llmtest.Reply{Text: fmt.Sprintf("reply #%d %s", n, strings.Repeat("lorem ipsum dolor ", 30))}
	})
	return fake, env(dir, url, "CYAN_CONFIG="+cfgPath), dir
}

type packetTrace struct {
	Packet struct {
		Messages []struct{ Role, Content string }
		Context  struct {
			Budget, Tokens int
			MiniFull       int `json:"mini_full"`
			Included       []string
			Compressed     []struct {
				ID      string `json:"id"`
				Cached  bool   `json:"cached"`
				TraceID string `json:"trace_id"`
			}
			Dropped []struct{ ID, Reason string }
		}
	}
}

func TestCompressionEndToEnd(t *testing.T) {
	t.Parallel()
	fake, envv, dir := setupCompression(t)
	d := start(t, dir, envv)
	compressedOnce := map[string]string{} // message id → trace id
	for i := range 12 {
		text := fmt.Sprintf("question %d, and please keep this line whole", i)
		code, out, err := d.post("/api/v1/messages", map[string]string{"channel": "long", "user": "ana", "text": text})
		if err != nil || code != 200 {
			t.Fatalf("turn %d: %d %v %v", i, code, out, err)
		}
		_, raw, _ := d.get("/api/v1/trace/last?channel=long")
		var tr packetTrace
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		ct := tr.Packet.Context
		if ct.Tokens > ct.Budget || ct.MiniFull != 2 {
			t.Fatalf("turn %d: context %d tokens, budget %d, mini %d", i, ct.Tokens, ct.Budget, ct.MiniFull)
		}
		compressed := map[string]bool{}
		for _, c := range ct.Compressed {
			compressed[c.ID] = true
			if prev, ok := compressedOnce[c.ID]; ok && (prev != c.TraceID || !c.Cached) {
				t.Errorf("turn %d: message %s compressed again (trace %s, then %s)", i, c.ID, prev, c.TraceID)
			}
			compressedOnce[c.ID] = c.TraceID
		}
		sent := ""
		for _, m := range tr.Packet.Messages[1:] {
			sent += m.Content + "\n"
		}
		var models []map[string]any
		all := d.messages(t, "long")
		byID := map[string]map[string]any{}
		for _, m := range all {
			byID[m["id"].(string)] = m
		}
		for _, id := range ct.Included {
			m := byID[id]
			switch m["role"] {
			case "user":
				if compressed[id] || !strings.Contains(sent, m["text"].(string)) {
					t.Errorf("turn %d: a user message was not sent whole: %q", i, m["text"])
				}
			case "assistant":
				models = append(models, m)
			}
		}
		for _, m := range models[max(0, len(models)-2):] {
			if compressed[m["id"].(string)] || !strings.Contains(sent, m["text"].(string)) {
				t.Errorf("turn %d: one of the last 2 model messages was compressed", i)
			}
		}
	}
	if len(compressedOnce) < 5 {
		t.Fatalf("only %d messages were ever compressed", len(compressedOnce))
	}
	var calls int
	for _, r := range chatRequests(fake) {
		if compressing(r) {
			calls++
		}
	}
	if calls != len(compressedOnce) {
		t.Errorf("%d compress calls for %d compressed messages: each message is compressed once", calls, len(compressedOnce))
	}

	// The generate traces are listed and shown.
	code, out, _ := d.get("/api/v1/traces?channel=long&name=compress&last=100")
	if list, _ := out["traces"].([]any); code != 200 || len(list) != calls {
		t.Fatalf("traces: %d, %d listed, want %d", code, len(list), calls)
	}
	stdout, stderr, rc := cli(t, d.cliEnv(), "", "trace", "--channel", "long", "-n", "3")
	if rc != 0 || !strings.Contains(stdout, "compressed earlier") || !strings.Contains(stdout, "compress [[RESPONSE]]") || !strings.Contains(stdout, "SECTION") {
		t.Fatalf("cyan trace --channel: rc=%d %s\n%s", rc, stderr, stdout)
	}
	var someTrace string
	for _, id := range compressedOnce {
		someTrace = id
	}
	stdout, _, rc = cli(t, d.cliEnv(), "", "trace", "show", someTrace)
	if rc != 0 || !strings.Contains(stdout, "Generate compress [[RESPONSE]]") || !strings.Contains(stdout, "[reply] source text") || !strings.Contains(stdout, "Result: {\"summary\":\"gave #") {
		t.Fatalf("cyan trace ID: rc=%d\n%s", rc, stdout)
	}
	stdout, _, rc = cli(t, d.cliEnv(), "", "trace", "--json", "--limit", "2")
	var listed struct{ Generate []map[string]any }
	if rc != 0 || json.Unmarshal([]byte(stdout), &listed) != nil || len(listed.Generate) != 2 {
		t.Fatalf("cyan trace --json: rc=%d\n%s", rc, stdout)
	}

	// Compressed forms outlive a restart: the next turn compresses
	// nothing it compressed before.
	d.stop(syscall.SIGTERM)
	d = start(t, dir, envv)
	before := calls
	if code, _, err := d.post("/api/v1/messages", map[string]string{"channel": "long", "user": "ana", "text": "after the restart"}); err != nil || code != 200 {
		t.Fatalf("turn after restart: %d %v", code, err)
	}
	_, raw, _ := d.get("/api/v1/trace/last?channel=long")
	var tr packetTrace
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &tr)
	after := 0
	for _, r := range chatRequests(fake) {
		if compressing(r) {
			after++
		}
	}
	for _, c := range tr.Packet.Context.Compressed {
		if _, old := compressedOnce[c.ID]; old && !c.Cached {
			t.Errorf("message %s compressed again after a restart", c.ID)
		}
	}
	if after-before > 1 {
		t.Errorf("%d compressions after the restart; at most the one new old-enough reply", after-before)
	}
}

func TestScriptCommands(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	dir := t.TempDir()
	envv := env(dir, url)
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("rate.ai.yaml", `---
input:
  - text: {required: true, type: string}
output:
  type: object
  properties:
    score: {type: number}
  required: [score]
generate: {attempts: 2}
use:
  - {source: text, label: review}
---
system: You rate reviews.
user: Rate the review from 0 to 1.
`)
	bad := write("bad.ai.yaml", "---\ninput: [text]\nuse:\n  - {source: text, label: system}\n---\nuser: hi\n")

	stdout, stderr, rc := cli(t, envv, "", "script", "check", good)
	if rc != 0 || !strings.Contains(stdout, "ok — script rate; inputs text*; sites RESPONSE; output checked") {
		t.Fatalf("check good: rc=%d %q %q", rc, stdout, stderr)
	}
	_, stderr, rc = cli(t, envv, "", "script", "check", bad)
	if rc != 1 || !strings.Contains(stderr, bad+`:4:27: the context label "system" is reserved`) {
		t.Fatalf("check bad: rc=%d %q", rc, stderr)
	}
	// ISDK code the scripts cannot run is an error with its line, and
	// running such a script sends nothing to the model.
	fn := write("fn.ai.yaml", "---\nname: fn\n---\n!fn |-\n  [js]function hi() { return 1 }\nuser: hello\n")
	_, stderr, rc = cli(t, envv, "", "script", "check", fn)
	if rc != 1 || !strings.Contains(stderr, fn+":4:1: !fn function blocks are not supported") || !strings.Contains(stderr, fn+":6:1: this line is outside the text block") {
		t.Fatalf("check !fn: rc=%d %q", rc, stderr)
	}
	before := len(chatRequests(fake))
	if _, stderr, rc = cli(t, envv, "", "script", "run", fn); rc == 0 || !strings.Contains(stderr, fn+":4:1:") || len(chatRequests(fake)) != before {
		t.Fatalf("run !fn: rc=%d %q", rc, stderr)
	}

	fake.Enqueue(llmtest.Reply{Text: "not json"}, llmtest.Reply{Text: "```json\n{\"score\": \"0.9\"}\n```"})
	stdout, stderr, rc = cli(t, envv, "", "script", "run", "--input", `{"text": "great phone"}`, "--json", "--trace", good)
	var res struct {
		Value    map[string]any
		TraceIDs []string `json:"trace_ids"`
		Traces   []struct {
			Attempts []map[string]any
			Context  []struct{ Label string }
		}
	}
	if rc != 0 || json.Unmarshal([]byte(stdout), &res) != nil || res.Value["score"] != 0.9 || len(res.Traces) != 1 || len(res.Traces[0].Attempts) != 2 || res.Traces[0].Context[0].Label != "review" {
		t.Fatalf("run: rc=%d %q\n%s", rc, stderr, stdout)
	}

	// Still invalid after the last attempt: exit 1 with the error.
	fake.Enqueue(llmtest.Reply{Text: `{"score": "high"}`}, llmtest.Reply{Text: `{"score": "high"}`})
	stdout, stderr, rc = cli(t, envv, "", "script", "run", "--trace", "--input", `{"text": "meh"}`, good)
	if rc != 1 || !strings.Contains(stderr, "invalid output after 2 attempt(s): at /score: got string, want number") || !strings.Contains(stderr, "Attempt 2") {
		t.Fatalf("invalid run: rc=%d out=%q err=%q", rc, stdout, stderr)
	}
	// A missing input is refused before any call.
	n := len(chatRequests(fake))
	_, stderr, rc = cli(t, envv, "", "script", "run", good)
	if rc != 2 || !strings.Contains(stderr, `input "text" is required`) || len(chatRequests(fake)) != n {
		t.Fatalf("missing input: rc=%d %q", rc, stderr)
	}
	// A built-in script by name.
	fake.Enqueue(llmtest.Reply{Text: `{"summary": "short"}`})
	stdout, stderr, rc = cli(t, envv, "", "script", "run", "compress", "--input", `{"text": "a long reply"}`)
	if rc != 0 || !strings.Contains(stdout, `"summary": "short"`) {
		t.Fatalf("built-in: rc=%d %q %q", rc, stdout, stderr)
	}
	stdout, _, rc = cli(t, envv, "", "script", "--help")
	if rc != 0 || !strings.Contains(stdout, "Usage: cyan script VERB") || !strings.Contains(stdout, "run FILE") {
		t.Errorf("help: rc=%d %q", rc, stdout)
	}
	stdout, _, rc = cli(t, envv, "", "script", "run", "--help")
	if rc != 0 || !strings.Contains(stdout, "Usage: cyan script run [flags] FILE") || !strings.Contains(stdout, "--input") {
		t.Errorf("help: rc=%d %q", rc, stdout)
	}
	if _, _, rc = cli(t, envv, "", "script", "frob"); rc != 2 {
		t.Errorf("unknown verb: rc=%d", rc)
	}
}
