package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// speechEvent is a "speech" event of /api/v1/stream (tts.Speech).
type speechEvent struct {
	Turn     string `json:"turn"`
	Seq      int    `json:"seq"`
	Emotion  string `json:"emotion"`
	Language string `json:"language"`
	Text     string `json:"text"`
	Audio    string `json:"audio"`
	Error    string `json:"error"`
}

// followSpeech reads GET /api/v1/stream of a channel and sends each speech
// event.
func followSpeech(t *testing.T, d *daemon, channel string) <-chan speechEvent {
	t.Helper()
	out := make(chan speechEvent, 64)
	resp, err := http.Get(d.base + "/api/v1/stream?channel=" + channel)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", resp, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	ready := make(chan struct{})
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				event = e
				continue
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			switch event {
			case "ready":
				close(ready)
			case "speech":
				var sp speechEvent
				if json.Unmarshal([]byte(data), &sp) == nil {
					out <- sp
				}
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream never said ready")
	}
	return out
}

// untilTurn collects speech events until one of turn arrives (speech of a
// channel comes in order, so everything voiced before it has come).
func untilTurn(t *testing.T, ch <-chan speechEvent, turn string) []speechEvent {
	t.Helper()
	var got []speechEvent
	timeout := time.After(30 * time.Second)
	for {
		select {
		case sp, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended; speech so far %+v", got)
			}
			got = append(got, sp)
			if sp.Turn == turn {
				return got
			}
		case <-timeout:
			t.Fatalf("no speech of turn %s; speech so far %+v", turn, got)
		}
	}
}

const speakScriptSystem = "You turn a short text into speech for a TTS voice"

// TestSpeakSegmentsAreWhatTheVoiceSays: a turn that calls speak (a happy
// Japanese segment, a sad Chinese one, written as the seed and a model
// write them: "jp", "cn", "HAPPY", "😢") is voiced by exactly those two
// segments, with their emotion and language normalised (ja, zh; happy,
// sad), and its text is not voiced.
func TestSpeakSegmentsAreWhatTheVoiceSays(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng is not installed")
	}
	t.Parallel()
	fake, url := fakeLLM(t)
	var mainCalls atomic.Int32
	fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.System, speakScriptSystem) {
			// The seed's codes and a model's own emotion words: they
			// reach the voice (and the page's face, which follows the
			// same speech events) normalised.
			return llmtest.Reply{Text: `{"speech": [{"emotion": "HAPPY", "language": "jp", "text": "やった、合格したよ！"},` +
				` {"emotion": "😢", "language": "cn", "text": "可是我们要分开了。"}]}`}
		}
		if !slices.ContainsFunc(r.Tools, func(tl llm.Tool) bool { return tl.Name == "speak" }) {
			return llmtest.Reply{Text: "ok"} // the daemon's own model calls
		}
		mainCalls.Add(1)
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == llm.RoleTool:
			return llmtest.Reply{Text: "这段文字不该被念出来，因为speak已经说过了。"}
		case strings.Contains(last.Content, "考试"):
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "s1", Name: "speak", Arguments: `{"text":"やった、合格したよ！可是我们要分开了。"}`}}}
		}
		return llmtest.Reply{Text: "好的，晚安。"}
	})
	data := t.TempDir()
	d := start(t, data, env(data, url))
	speech := followSpeech(t, d, "desktop")

	code, out, err := d.post("/api/v1/messages", map[string]any{"channel": "desktop", "user": "hareru", "text": "考试怎么样？"})
	if code != 200 || err != nil {
		t.Fatalf("the speak turn: %d %v %v", code, out, err)
	}
	turn := out["message_id"].(string)
	code, out, err = d.post("/api/v1/messages", map[string]any{"channel": "desktop", "user": "hareru", "text": "晚安", "stream": false})
	if code != 200 || err != nil {
		t.Fatalf("the next turn: %d %v %v", code, out, err)
	}
	next := out["message_id"].(string)

	var ofTurn []speechEvent
	for _, sp := range untilTurn(t, speech, next) {
		if sp.Turn == turn {
			ofTurn = append(ofTurn, sp)
		}
	}
	want := []speechEvent{
		{Turn: turn, Emotion: "happy", Language: "ja", Text: "やった、合格したよ！"},
		{Turn: turn, Emotion: "sad", Language: "zh", Text: "可是我们要分开了。"},
	}
	if len(ofTurn) != len(want) {
		t.Fatalf("speech of the speak turn: %+v, want exactly %+v", ofTurn, want)
	}
	for i, sp := range ofTurn {
		if sp.Emotion != want[i].Emotion || sp.Language != want[i].Language || sp.Text != want[i].Text {
			t.Errorf("speech %d: %+v, want %+v", i, sp, want[i])
		}
		if sp.Audio == "" || sp.Error != "" {
			t.Errorf("speech %d has no audio: %+v", i, sp)
		}
	}
	if n := mainCalls.Load(); n < 3 {
		t.Errorf("%d main model calls: the turn did not go on after speak", n)
	}
	if ms := d.messages(t, "desktop"); !slices.ContainsFunc(ms, func(m map[string]any) bool {
		return strings.Contains(m["text"].(string), "这段文字不该被念出来")
	}) {
		t.Errorf("the turn's text was not stored: %v", ms)
	}
}

// TestAReplyIsVoicedWithoutItsMarkup: a reply that is not streamed to its
// caller is voiced from its live text; its code block and comment are in
// no speech event, and its emotions come from the rules.
func TestAReplyIsVoicedWithoutItsMarkup(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng is not installed")
	}
	t.Parallel()
	fake, url := fakeLLM(t)
	fake.SetDefault(func(r llmtest.Request) llmtest.Reply {
		if !slices.ContainsFunc(r.Tools, func(tl llm.Tool) bool { return tl.Name == "speak" }) {
			return llmtest.Reply{Text: "ok"}
		}
		return llmtest.Reply{Text: "好的！看这段：\n```go\nfmt.Println(\"secret. code!\")\n```\n<!-- note: hidden. -->明白了吗？"}
	})
	data := t.TempDir()
	d := start(t, data, env(data, url))
	speech := followSpeech(t, d, "desktop")
	code, out, err := d.post("/api/v1/messages", map[string]any{"channel": "desktop", "user": "hareru", "text": "写代码"})
	if code != 200 || err != nil {
		t.Fatalf("%d %v %v", code, out, err)
	}
	turn := out["message_id"].(string)
	var got []speechEvent
	for len(got) == 0 || got[len(got)-1].Text != "明白了吗？" {
		got = append(got, untilTurn(t, speech, turn)...)
	}
	var texts, emotions []string
	for _, sp := range got {
		texts = append(texts, sp.Text)
		emotions = append(emotions, sp.Emotion)
	}
	if !slices.Equal(texts, []string{"好的！", "看这段：", "明白了吗？"}) || !slices.Equal(emotions, []string{"excited", "neutral", "ask"}) {
		t.Errorf("speech %q %q", texts, emotions)
	}
}
