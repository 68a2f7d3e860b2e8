package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// formatName is the name of a request's JSON-schema response format: the
// prompt script that made the call.
func formatName(req llmtest.Request) string {
	_, rest, ok := strings.Cut(string(req.ResponseFormat), `"name":"`)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, `"`)
	return name
}

// TestStepScriptOverrideWithoutRestart runs remember's step through its
// built-in prompt script in the real daemon, then writes an override into
// the persona's scripts/ folder: the next remember runs the override, with
// no restart. Both calls are traced under their channel, for cyan trace
// and GET /api/v1/traces.
func TestStepScriptOverrideWithoutRestart(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	dir := t.TempDir()
	pdir := filepath.Join(dir, "persona")
	if err := os.MkdirAll(pdir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "persona.md"), []byte("---\nname: Cy\n---\nYou are ${agent_name}.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "cyan.yaml")
	if err := os.WriteFile(cfgPath, []byte("persona: ./persona\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case formatName(req) == "remember":
			return llmtest.Reply{Text: `{"action": "add", "kind": "note", "content": "noted by the step"}`}
		case strings.Contains(last, "remember: "):
			text := last[strings.Index(last, "remember: ")+len("remember: "):]
			args, _ := json.Marshal(map[string]string{"text": text})
			return llmtest.Reply{Text: "ok", ToolCalls: []llm.ToolCall{{ID: "r", Name: "remember", Arguments: string(args)}}}
		}
		return llmtest.Reply{Text: "<empty_reply>"}
	})
	envv := env(dir, url, "CYAN_CONFIG="+cfgPath)
	d := start(t, dir, envv)

	// rememberCalls waits for the n-th call of the remember script.
	rememberCalls := func(n int) []llmtest.Request {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); ; {
			var calls []llmtest.Request
			for _, r := range chatRequests(fake) {
				if formatName(r) == "remember" {
					calls = append(calls, r)
				}
			}
			if len(calls) >= n {
				return calls
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d calls of the remember script, want %d\n%s", len(calls), n, d.stderr.String())
			}
			time.Sleep(20 * time.Millisecond) // polling the tool call that runs after the answer
		}
	}
	say(t, d, "home", "remember: alice's cat is called nyalia")
	first := rememberCalls(1)[0]
	if sys := first.Messages[0].Content; !strings.Contains(sys, "You keep the long-term memory of Cy") {
		t.Fatalf("the built-in remember script was not run:\n%s", sys)
	}

	// The override extends the built-in script with a note of its own.
	sdir := filepath.Join(pdir, "scripts")
	if err := os.MkdirAll(sdir, 0o700); err != nil {
		t.Fatal(err)
	}
	override := "---\nextends: remember\n---\nsystem:\n  notes: [Everything alice says about her cat is a note.]\n"
	if err := os.WriteFile(filepath.Join(sdir, "remember.ai.yaml"), []byte(override), 0o600); err != nil {
		t.Fatal(err)
	}
	say(t, d, "home", "remember: nyalia likes tuna")
	second := rememberCalls(2)[1]
	if sys := second.Messages[0].Content; !strings.HasSuffix(sys, "* Everything alice says about her cat is a note.") || !strings.Contains(sys, "long-term memory of Cy") {
		t.Fatalf("the persona's override was not picked up:\n%s", sys)
	}
	select {
	case <-d.exited:
		t.Fatalf("the daemon stopped:\n%s", d.stderr.String())
	default:
	}

	// Both calls are traced under the channel.
	code, out, _ := d.get("/api/v1/traces?name=remember&channel=home&last=10")
	traces, _ := out["traces"].([]any)
	if code != 200 || len(traces) != 2 {
		t.Fatalf("GET /api/v1/traces: %d %v", code, out)
	}
	stdout, stderr, rc := cli(t, d.cliEnv(), "", "trace", "-n", "5", "--name", "remember")
	if rc != 0 || strings.Count(stdout, "remember [[RESPONSE]]") != 2 || !strings.Contains(stdout, "home") {
		t.Fatalf("cyan trace: rc=%d\n%s%s", rc, stdout, stderr)
	}
	// A broken edit is logged when the persona folder changes, and the
	// step falls back (remember keeps a plain note) until it is fixed.
	if err := os.WriteFile(filepath.Join(sdir, "remember.ai.yaml"), []byte("user: \"{{ broken\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(d.stderr.String(), "prompt script does not load"); {
		if time.Now().After(deadline) {
			t.Fatalf("a broken override was not reported:\n%s", d.stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the daemon's log
	}
	if !strings.Contains(d.stderr.String(), "remember.ai.yaml:1:") {
		t.Fatalf("the report does not name the file and line:\n%s", d.stderr.String())
	}
	if _, stderr, rc := cli(t, envv, "", "script", "check", "remember"); rc != 1 || !strings.Contains(stderr, "remember.ai.yaml:1:") {
		t.Fatalf("cyan script check of a broken override: rc=%d %q", rc, stderr)
	}
	if err := os.WriteFile(filepath.Join(sdir, "remember.ai.yaml"), []byte(override), 0o600); err != nil {
		t.Fatal(err)
	}

	// cyan script check sees the override and what it extends.
	stdout, stderr, rc = cli(t, envv, "", "script", "check", "remember")
	if rc != 0 || !strings.Contains(stdout, "extends remember.ai.yaml") {
		t.Fatalf("cyan script check remember: rc=%d %q %q", rc, stdout, stderr)
	}
}
