package e2e

import (
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/packets"
)

// TestNaturalToolTakesThePacket: through the real binary, the model calls
// speak with the nl_packet's scene and a text limit; the speak script's
// trace shows the packet as sent, and the result the model reads is cut
// to the limit.
func TestNaturalToolTakesThePacket(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		if scripttest.FormatName(req) == "speak" {
			return llmtest.Reply{Text: `{"speech": [{"emotion": "happy", "language": "en", "text": "happy birthday, alice!"}]}`}
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "user" && strings.Contains(last.Content, "sing for me") {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "s1", Name: "speak",
				Arguments: `{"text": "happy birthday, alice!", "scene": "alice's birthday party, everyone is singing", "output_text_limit": 24}`}}}
		}
		return llmtest.Reply{Text: "🎂"}
	})
	dir := t.TempDir()
	d := start(t, dir, env(dir, url))
	say(t, d, "home", "sing for me")

	code, out, err := d.get("/api/v1/traces?name=speak&last=5")
	list, _ := out["traces"].([]any)
	if err != nil || code != 200 || len(list) != 1 {
		t.Fatalf("speak traces: %d %v %v", code, out, err)
	}
	id := list[0].(map[string]any)["id"].(string)
	code, tr, err := d.get("/api/v1/traces/" + id)
	if err != nil || code != 200 {
		t.Fatalf("trace %s: %d %v", id, code, err)
	}
	p, _ := tr["packet"].(map[string]any)
	if p["aim"] != "happy birthday, alice!" || p["scene"] != "alice's birthday party, everyone is singing" || p["output_text_limit"] != float64(24) {
		t.Fatalf("the trace's packet: %v", tr["packet"])
	}
	// The limit was told to the step, and the result the model read is
	// whole speech JSON whose words keep within 24 characters: a limit
	// never cuts a structured result.
	var result string
	told := false
	for _, r := range chatRequests(fake) {
		if scripttest.FormatName(r) == "speak" {
			for _, m := range r.Messages {
				told = told || strings.Contains(m.Content, "at most 24 characters")
			}
		}
		for _, m := range r.Messages {
			if m.Role == "tool" {
				result = strings.TrimPrefix(m.Content, "#speak ") // the tool's name heads its result
			}
		}
	}
	segs, ok := packets.ParseSpeech(result)
	words := 0
	for _, s := range segs {
		words += len([]rune(s.Text))
	}
	if !ok || words == 0 || words > 24 || !told {
		t.Fatalf("the speak result the model read: %q (%d characters of words; the step told the limit: %v)", result, words, told)
	}
}
