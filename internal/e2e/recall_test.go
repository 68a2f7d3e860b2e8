package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// historyFile writes a jsonl history: a year-old talk about an exam among
// filler, in English, Chinese and Japanese.
func historyFile(t *testing.T) (string, int) {
	t.Helper()
	var b strings.Builder
	base := time.Date(2025, 1, 10, 20, 0, 0, 0, time.UTC)
	lines := []struct{ user, role, text string }{
		{"nyalia", "", "my physics exam is next friday and I am nervous"},
		{"青蓝", "assistant", "let's review optics together, you will do fine"},
		{"nyalia", "", "我不理解啊，这么多知识点怎么组织起来的？"},
		{"青蓝", "assistant", "高数其实是存在着学习的大方向的"},
		{"nyalia", "", "明日は数学の試験があるので緊張しています"},
	}
	n := 0
	for i := range 40 {
		fmt.Fprintf(&b, `{"time": %q, "channel": "home", "user": "nyalia", "text": "filler message number %d about the weather and lunch", "id": "f%d"}`+"\n",
			base.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), i, i)
		n++
	}
	for i, l := range lines {
		role := ""
		if l.role != "" {
			role = fmt.Sprintf(`, "role": %q`, l.role)
		}
		fmt.Fprintf(&b, `{"time": %q, "channel": "home", "user": %q%s, "text": %q, "id": "e%d"}`+"\n",
			base.AddDate(0, 1, 0).Add(time.Duration(i)*time.Minute).Format(time.RFC3339), l.user, role, l.text, i)
		n++
	}
	path := filepath.Join(t.TempDir(), "history.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, n
}

func waitIndexed(t *testing.T, d *daemon) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, st, err := d.get("/api/v1/recall/status")
		if err == nil && code == 200 && (st["vectors_off"] == true || st["vector_ready"] == true && st["embedded"] == st["messages"]) && st["indexed"] == st["messages"] {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("recall did not catch up: %v %v", st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestImportAndRecall(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	dir := t.TempDir()
	d := start(t, dir, env(dir, url))
	path, n := historyFile(t)

	stdout, stderr, rc := cli(t, d.cliEnv(), "", "import", path)
	if rc != 0 || !strings.Contains(stdout, fmt.Sprintf("imported %d messages (0 were already there)", n)) {
		t.Fatalf("cyan import: rc=%d out=%q err=%q", rc, stdout, stderr)
	}
	stdout, _, rc = cli(t, d.cliEnv(), "", "import", path)
	if rc != 0 || !strings.Contains(stdout, fmt.Sprintf("imported 0 messages (%d were already there)", n)) {
		t.Fatalf("second import: rc=%d out=%q", rc, stdout)
	}
	waitIndexed(t, d)

	for _, q := range []struct{ query, want string }{
		{"physics exam", "physics exam is next friday"},
		{"知识点", "知识点"},
		{"数学の試験", "試験があるので"},
	} {
		stdout, stderr, rc = cli(t, d.cliEnv(), "", "recall", "--channel", "home", "-n", "2", "--json", q.query)
		if rc != 0 {
			t.Fatalf("cyan recall %q: rc=%d %s", q.query, rc, stderr)
		}
		var ans struct {
			Results []struct {
				Text        string   `json:"text"`
				ExternalIDs []string `json:"external_ids"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(stdout), &ans); err != nil || len(ans.Results) == 0 || !strings.Contains(ans.Results[0].Text, q.want) {
			t.Fatalf("cyan recall %q: %v\n%s", q.query, err, stdout)
		}
	}
	stdout, _, rc = cli(t, d.cliEnv(), "", "recall", "physics exam")
	if rc != 0 || !strings.Contains(stdout, "message 41") || !strings.Contains(stdout, "history/home/2025-02-10") {
		t.Fatalf("cyan recall (text): rc=%d\n%s", rc, stdout)
	}

	// The model recalls through its tool; the passages land in the
	// pulled-info area of the next turn's prompt.
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		format := string(req.ResponseFormat)
		switch {
		case strings.Contains(format, "recall_filter"):
			return llmtest.Reply{Text: `{"keep": [1], "give_up": false}`}
		case strings.Contains(format, "recall_summary"):
			return llmtest.Reply{Text: `{"summarized_info": "nyalia had a physics exam in February 2025"}`}
		case req.Messages[len(req.Messages)-1].Role == llm.RoleTool:
			return llmtest.Reply{Text: "you had a physics exam last February"}
		case strings.Contains(req.Messages[len(req.Messages)-1].Content, "thanks"):
			return llmtest.Reply{Text: "anytime"}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "recall", Arguments: `{"prompt": "nyalia's exam", "max_results": 2}`}}}
	})
	code, out, err := d.post("/api/v1/messages", map[string]string{"channel": "home", "user": "nyalia", "text": "didn't we talk about my exam last year?"})
	if err != nil || code != 200 || fmt.Sprint(out["replies"]) != "[you had a physics exam last February]" {
		t.Fatalf("turn with recall: %d %v %v", code, out, err)
	}
	code, out, err = d.post("/api/v1/messages", map[string]string{"channel": "home", "user": "nyalia", "text": "thanks"})
	if err != nil || code != 200 {
		t.Fatalf("next turn: %d %v %v", code, out, err)
	}
	_, tr, err := d.get("/api/v1/trace/last?channel=home")
	if err != nil {
		t.Fatal(err)
	}
	system := tr["packet"].(map[string]any)["messages"].([]any)[0].(map[string]any)["content"].(string)
	// The passage holds the exam (message 41); the line said before it
	// may open it (the built-in vectors make every line of a small history
	// a candidate, and the line before a match gains a little).
	m := regexp.MustCompile(`# Pulled information\n%\[history/home/[0-9-]+\] message (\d+) ~ message (\d+)`).FindStringSubmatch(system)
	if m == nil {
		t.Fatalf("the pulled-info area is missing from the next prompt:\n%s", system)
	}
	if lo, _ := strconv.Atoi(m[1]); lo > 41 {
		t.Fatalf("the pulled passage %s does not hold the exam (message 41):\n%s", m[0], system)
	}
	if hi, _ := strconv.Atoi(m[2]); hi < 41 {
		t.Fatalf("the pulled passage %s does not hold the exam (message 41):\n%s", m[0], system)
	}

	// After a restart the index resumes and recall answers at once; the
	// built-in GloVe embedder's vectors, made once, are opened from their
	// file, not made again.
	d.stop(syscall.SIGTERM)
	d = start(t, dir, env(dir, url))
	st := waitIndexed(t, d)
	if st["vectors_off"] == true || st["vectors"].(float64) < float64(n) || st["embedded"] != st["messages"] || st["indexed"].(float64) < float64(n) {
		t.Fatalf("after restart: %v", st)
	}
	code, out, err = d.post("/api/v1/recall", map[string]any{"prompt": "physics exam next friday", "mode": "search", "max_results": 3})
	if err != nil || code != 200 || !strings.Contains(fmt.Sprint(out["results"]), "physics exam is next friday") {
		t.Fatalf("recall after restart: %d %v %v", code, out, err)
	}
	if !strings.Contains(d.stderr.String(), "lexical index opened from its snapshot") {
		t.Fatalf("the restart did not open the lexical snapshot:\n%s", d.stderr.String())
	}
	waitLog(t, d, "vector index opened from its file")
}

func TestImportReportsBadLines(t *testing.T) {
	t.Parallel()
	_, url := fakeLLM(t)
	dir := t.TempDir()
	d := start(t, dir, env(dir, url))
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(path, []byte(`{"time": "2025-01-01T00:00:00Z", "channel": "c", "user": "a", "text": "fine"}`+"\n"+`{"time": "soon", "channel": "c", "text": "x"}`+"\n"), 0o600)
	_, stderr, rc := cli(t, d.cliEnv(), "", "import", path)
	if rc != 2 || !strings.Contains(stderr, "line 2") || !strings.Contains(stderr, "RFC 3339") || !strings.Contains(stderr, "1 messages before it were imported") {
		t.Fatalf("bad line: rc=%d %q", rc, stderr)
	}
	if ms := d.messages(t, "c"); len(ms) != 1 {
		t.Fatalf("the good line must be kept: %v", ms)
	}
}
