package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// openRef runs the open tool through the API in channel, as the model's
// call would, and returns what it showed.
func openRef(t *testing.T, d *daemon, channel, ref string) string {
	t.Helper()
	code, out, err := d.post("/api/v1/tools/open/run", map[string]any{"arguments": map[string]string{"ref": ref}, "channel": channel})
	if err != nil || code != 200 || out["decision"] != "allow" || out["error"] != nil {
		t.Fatalf("open %s: %d %v %v", ref, code, out, err)
	}
	text, _ := out["result"].(map[string]any)["output_text"].(string)
	return text
}

var (
	eventLine = regexp.MustCompile(`%\[event ([^\]]+)\] (.+)`)
	rangeRef  = regexp.MustCompile(`%\[history/[^\]]+\] message \d+(?: ~ message \d+)?`)
)

// A recorded packet shows each event record as its reference; opening a
// topic or a day gives its summary and the history ranges of its
// messages, and those open to the words.
func TestEventsOpenToTheirTalk(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	fake.SetDefault(lifeLog)
	dir := t.TempDir()
	d := start(t, dir, env(dir, url))
	for _, text := range []string{"my tomatoes are ripe", "that's settled then"} {
		turnAs(t, d, map[string]string{"channel": "garden", "user": "alice", "text": text})
	}
	later := time.Now().Add(48 * time.Hour).Format(time.RFC3339)
	if stdout, stderr, rc := cli(t, d.cliEnv(), "", "events", "rollup", "--now", later); rc != 0 || !strings.Contains(stdout, "wrote day") {
		t.Fatalf("events rollup: rc=%d\n%s%s", rc, stdout, stderr)
	}
	turnAs(t, d, map[string]string{"channel": "garden", "user": "alice", "text": "guess what"})
	reqs := chatRequests(fake)
	sys := reqs[len(reqs)-1].System
	records := map[string]string{} // title → label
	for _, m := range eventLine.FindAllStringSubmatch(sys, -1) {
		records[m[2]] = m[1]
	}
	topic, day := records["alice and I settled the tomato plan"], records["a day of gardening talk"]
	if topic == "" || day == "" {
		t.Fatalf("the packet's events section lacks the records' references (%v):\n%s", records, sys)
	}

	opened := openRef(t, d, "garden", "%[event "+topic+"]")
	if !strings.Contains(opened, "summary: alice and I settled the tomato plan") {
		t.Fatalf("opened topic:\n%s", opened)
	}
	ranges := rangeRef.FindAllString(opened, -1)
	if len(ranges) != 1 {
		t.Fatalf("opened topic shows %d ranges, want 1:\n%s", len(ranges), opened)
	}
	words := openRef(t, d, "garden", ranges[0])
	if !strings.Contains(words, "alice") || !strings.Contains(words, "my tomatoes are ripe") || !strings.Contains(words, "that's settled then") {
		t.Fatalf("%s opened to:\n%s", ranges[0], words)
	}

	opened = openRef(t, d, "garden", "%[event "+day+"]")
	if !strings.Contains(opened, "summary: a day of gardening talk") || !strings.Contains(opened, "%[event "+topic+"]: "+ranges[0]) {
		t.Fatalf("opened day (want its topic %s with %s):\n%s", topic, ranges[0], opened)
	}
}

// A theory the owner keeps comes to the owner's topic that touches it, in
// the pulled-info area with its reason in the trace; a stranger in a group
// talking of the same thing never sees it.
func TestTheoryComesToTheTopic(t *testing.T) {
	t.Parallel()
	d, fake, _ := toolsDaemon(t, "")
	fake.Enqueue(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "t1", Name: "theory", Arguments: jsonArgs(map[string]string{"op": "create", "title": "zebra migration",
		"article": "ZEBRA-CANARY: zebras walk north in june, following the rain\nthey come back south in october"})}}},
		llmtest.Reply{Text: "noted"})
	turnAs(t, d, map[string]string{"channel": "home", "user": "hareru", "text": "keep my theory about the herds"})
	waitFor(t, "the theory indexed for recall", func() bool {
		_, st, _ := d.get("/api/v1/recall/status")
		n, _ := st["records"].(float64)
		return n >= 1
	})
	fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "ok"} })

	turnAs(t, d, map[string]string{"channel": "home", "user": "hareru", "text": "look, the zebras walk north again after the rain"})
	reqs := chatRequests(fake)
	sys := reqs[len(reqs)-1].System
	pulled := sys[max(0, strings.Index(sys, "# Pulled information")):]
	if !strings.Contains(sys, "# Pulled information") || !strings.Contains(pulled, "%[theory zebra migration] - ZEBRA-CANARY: zebras walk north in june") {
		t.Fatalf("the owner's topic did not bring the theory into the pulled-info area:\n%s", sys)
	}
	_, tr, _ := d.get("/api/v1/trace/last?channel=home")
	why := ""
	for _, s := range tr["packet"].(map[string]any)["sections"].([]any) {
		sec := s.(map[string]any)
		if sec["slot"] != "pulled" {
			continue
		}
		for _, it := range sec["items"].([]any) {
			item := it.(map[string]any)
			if strings.HasPrefix(item["id"].(string), "theory:") && item["included"] == true {
				why, _ = item["reason"].(string)
			}
		}
	}
	if !strings.Contains(why, "the topic's talk touches it") || !strings.Contains(why, "zebra") {
		t.Fatalf("the trace does not say why the theory came (%q): %v", why, tr["packet"])
	}
	// And it opens.
	if out := openRef(t, d, "home", "%[theory zebra migration]"); !strings.Contains(out, "ZEBRA-CANARY") {
		t.Fatalf("open theory: %s", out)
	}

	turnAs(t, d, map[string]string{"channel": "qq:group:1", "kind": "group", "user": "mallory", "user_id": "666",
		"text": "look, the zebras walk north again after the rain"})
	reqs = chatRequests(fake)
	if sys := reqs[len(reqs)-1].System; strings.Contains(sys, "ZEBRA-CANARY") || strings.Contains(sys, "zebra migration") {
		t.Fatalf("a stranger's topic brought the owner's theory:\n%s", sys)
	}
	_, tr, _ = d.get("/api/v1/trace/last?channel=qq:group:1")
	if b := jsonArgs(tr); strings.Contains(b, "zebra migration") || strings.Contains(b, "ZEBRA-CANARY") {
		t.Fatalf("the stranger's trace names the owner's theory: %s", b)
	}
}
