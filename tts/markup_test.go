package tts

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// Markup is gone before the text is cut: nothing of it is read, and a full
// stop inside code ends no sentence.
func TestSplitRemovesMarkup(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		actions string
		want    []Segment
	}{
		{"a code block", "Run this:\n```go\nfmt.Println(\"a. b? c!\")\n```\nThat is all.", "",
			[]Segment{{"neutral", "en", "Run this:"}, {"neutral", "en", "That is all."}}},
		{"an unclosed code block", "看：\n```sh\nrm -rf x. y", "",
			[]Segment{{"neutral", "zh", "看："}}},
		{"inline code", "Call `os.Exit(1)` now. Ok", "",
			[]Segment{{"neutral", "en", "Call now."}, {"neutral", "en", "Ok"}}},
		{"an html comment", "好的<!-- 心情: 好. 记得! -->，明天见。", "",
			[]Segment{{"neutral", "zh", "好的，明天见。"}}},
		{"an html tag", "line one<br>line two.", "",
			[]Segment{{"neutral", "en", "line one line two."}}},
		{"an image", "看！![IMG](https://x.test/a.png)好看吗？", "",
			[]Segment{{"excited", "zh", "看！"}, {"ask", "zh", "好看吗？"}}},
		{"a link keeps its words", "Read [the guide](https://x.test/g?a=1. b) today.", "",
			[]Segment{{"neutral", "en", "Read the guide today."}}},
		{"emphasis marks", "This is **very** __bold__ and ~~gone~~ text.", "",
			[]Segment{{"neutral", "en", "This is very bold and gone text."}}},
		{"headings quotes and lists", "# Title\n> quoted line\n- item one\n* item two", "",
			[]Segment{{"neutral", "en", "Title"}, {"neutral", "en", "quoted line"}, {"neutral", "en", "item one"}, {"neutral", "en", "item two"}}},
		{"actions skipped", "*waves happily* Hello there. *smiles*", ActionsSkip,
			[]Segment{{"neutral", "en", "Hello there."}}},
		{"actions spoken", "*waves* Hello there.", ActionsSpeak,
			[]Segment{{"neutral", "en", "waves Hello there."}}},
		{"actions narrated", "Hi! *waves happily* How are you?", ActionsNarrate,
			[]Segment{{"excited", "en", "Hi!"}, {Narration, "en", "waves happily"}, {"ask", "en", "How are you?"}}},
		{"a narrated action mid-sentence", "我*歪头*不知道。", ActionsNarrate,
			[]Segment{{"neutral", "zh", "我"}, {Narration, "zh", "歪头"}, {"neutral", "zh", "不知道。"}}},
		{"a star that is no action", "2 * 3 = 6 and 5*", ActionsNarrate,
			[]Segment{{"neutral", "en", "2 3 = 6 and 5"}}},
		{"snake case and faces stay", "use snake_case ^_^", "",
			[]Segment{{"happy", "en", "use snakecase"}}},
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
				var got []Segment
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
