package tts

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

// Markup is gone before the text is cut: nothing of it is read, and a full
// stop inside code ends no sentence.
func TestSplitRemovesMarkup(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		actions string
		want    []packets.Segment
	}{
		{"a code block", "Run this:\n```go\nfmt.Println(\"a. b? c!\")\n```\nThat is all.", "",
			[]packets.Segment{{Emotion: "neutral", Language: "en", Text: "Run this:"}, {Emotion: "neutral", Language: "en", Text: "That is all."}}},
		{"an unclosed code block", "看：\n```sh\nrm -rf x. y", "",
			[]packets.Segment{{Emotion: "neutral", Language: "zh", Text: "看："}}},
		{"inline code", "Call `os.Exit(1)` now. Ok", "",
			[]packets.Segment{{Emotion: "neutral", Language: "en", Text: "Call now."}, {Emotion: "neutral", Language: "en", Text: "Ok"}}},
		{"an html comment", "好的<!-- 心情: 好. 记得! -->，明天见。", "",
			[]packets.Segment{{Emotion: "neutral", Language: "zh", Text: "好的，明天见。"}}},
		{"an html tag", "line one<br>line two.", "",
			[]packets.Segment{{Emotion: "neutral", Language: "en", Text: "line one line two."}}},
		{"an image", "看！![IMG](https://x.test/a.png)好看吗？", "",
			[]packets.Segment{{Emotion: "excited", Language: "zh", Text: "看！"}, {Emotion: "ask", Language: "zh", Text: "好看吗？"}}},
		{"a link keeps its words", "Read [the guide](https://x.test/g?a=1. b) today.", "",
			[]packets.Segment{{Emotion: "neutral", Language: "en", Text: "Read the guide today."}}},
		{"emphasis marks", "This is **very** __bold__ and ~~gone~~ text.", "",
			[]packets.Segment{{Emotion: "neutral", Language: "en", Text: "This is very bold and gone text."}}},
		{"headings quotes and lists", "# Title\n> quoted line\n- item one\n* item two", "",
			[]packets.Segment{{Emotion: "neutral", Language: "en", Text: "Title"}, {Emotion: "neutral", Language: "en", Text: "quoted line"}, {Emotion: "neutral", Language: "en", Text: "item one"}, {Emotion: "neutral", Language: "en", Text: "item two"}}},
		{"actions skipped", "*waves happily* Hello there. *smiles*", ActionsSkip,
			[]packets.Segment{{Emotion: "neutral", Language: "en", Text: "Hello there."}}},
		{"actions spoken", "*waves* Hello there.", ActionsSpeak,
			[]packets.Segment{{Emotion: "neutral", Language: "en", Text: "waves Hello there."}}},
		{"actions narrated", "Hi! *waves happily* How are you?", ActionsNarrate,
			[]packets.Segment{{Emotion: "excited", Language: "en", Text: "Hi!"}, {Emotion: Narration, Language: "en", Text: "waves happily"}, {Emotion: "ask", Language: "en", Text: "How are you?"}}},
		{"a narrated action mid-sentence", "我*歪头*不知道。", ActionsNarrate,
			[]packets.Segment{{Emotion: "neutral", Language: "zh", Text: "我"}, {Emotion: Narration, Language: "zh", Text: "歪头"}, {Emotion: "neutral", Language: "zh", Text: "不知道。"}}},
		{"a star that is no action", "2 * 3 = 6 and 5*", ActionsNarrate,
			[]packets.Segment{{Emotion: "neutral", Language: "en", Text: "2 3 = 6 and 5"}}},
		{"snake case and faces stay", "use snake_case ^_^", "",
			[]packets.Segment{{Emotion: "happy", Language: "en", Text: "use snakecase"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole := &Splitter{Actions: tt.actions}
			got := append(whole.Feed(tt.text), whole.Flush()...)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("whole %q\n got %q\nwant %q", tt.text, got, tt.want)
			}
			rng := rand.New(rand.NewPCG(5, uint64(len(tt.text))))
			for range 40 {
				s := &Splitter{Actions: tt.actions}
				var got []packets.Segment
				r := []rune(tt.text)
				for len(r) > 0 {
					n := min(1+rng.IntN(5), len(r))
					got = append(got, s.Feed(string(r[:n]))...)
					r = r[n:]
				}
				got = append(got, s.Flush()...)
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("streamed %q\n got %q\nwant %q", tt.text, got, tt.want)
				}
			}
		})
	}
}

func TestUnmark(t *testing.T) {
	got := Unmark("a `b` <!-- c --> ![d](e) [f](g) **h** *i*\n```\nj\n```", ActionsSkip)
	for _, gone := range []string{"b", "c", "d", "e", "g", "*", "j", "i"} {
		if strings.Contains(got, gone) {
			t.Errorf("Unmark kept %q: %q", gone, got)
		}
	}
	if !strings.Contains(got, "f") || !strings.Contains(got, "h") {
		t.Errorf("Unmark lost words: %q", got)
	}
}
