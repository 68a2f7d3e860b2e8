package tts

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []packets.Segment
	}{
		{"chinese japanese english", "你好，今天天气很好。こんにちは、元気ですか？I am fine, thank you very much.",
			[]packets.Segment{{Emotion: "neutral", Language: "zh", Text: "你好，今天天气很好。"}, {Emotion: "ask", Language: "ja", Text: "こんにちは、元気ですか？"}, {Emotion: "neutral", Language: "en", Text: "I am fine, thank you very much."}}},
		{"a short latin word stays in chinese", "我喜欢 Go 语言！",
			[]packets.Segment{{Emotion: "excited", Language: "zh", Text: "我喜欢 Go 语言！"}}},
		{"a long latin run is cut out", "他说 this is really good 然后走了。",
			[]packets.Segment{{Emotion: "neutral", Language: "zh", Text: "他说"}, {Emotion: "neutral", Language: "en", Text: "this is really good"}, {Emotion: "neutral", Language: "zh", Text: "然后走了。"}}},
		{"kanji with kana is japanese", "東京に行きたい。",
			[]packets.Segment{{Emotion: "neutral", Language: "ja", Text: "東京に行きたい。"}}},
		{"a short kanji sentence after japanese stays japanese", "ありがとう。本当。",
			[]packets.Segment{{Emotion: "neutral", Language: "ja", Text: "ありがとう。"}, {Emotion: "neutral", Language: "ja", Text: "本当。"}}},
		{"decimal points do not end a sentence", "Pi is 3.14 roughly. Yes!",
			[]packets.Segment{{Emotion: "neutral", Language: "en", Text: "Pi is 3.14 roughly."}, {Emotion: "excited", Language: "en", Text: "Yes!"}}},
		{"closing quotes stay with their sentence", "她说：「好！」然后笑了。",
			[]packets.Segment{{Emotion: "excited", Language: "zh", Text: "她说：「好！」"}, {Emotion: "neutral", Language: "zh", Text: "然后笑了。"}}},
		{"notation and markdown are not read", "看 %[notes/a.md] 和 https://example.com/x **重点**。",
			[]packets.Segment{{Emotion: "neutral", Language: "zh", Text: "看 链接 和 链接 重点。"}}},
		{"korean", "안녕하세요. Hello there friend.",
			[]packets.Segment{{Emotion: "neutral", Language: "ko", Text: "안녕하세요."}, {Emotion: "neutral", Language: "en", Text: "Hello there friend."}}},
		{"nothing to say", "…… ！", nil},
		{"newlines end sentences", "第一行\n第二行",
			[]packets.Segment{{Emotion: "neutral", Language: "zh", Text: "第一行"}, {Emotion: "neutral", Language: "zh", Text: "第二行"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.text)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Split(%q)\n got %q\nwant %q", tt.text, got, tt.want)
			}
		})
	}
}

// Streaming the text in any pieces gives the same segments as the whole.
func TestSplitterStreamsLikeWhole(t *testing.T) {
	texts := []string{
		"你好，今天天气很好。こんにちは、元気ですか？I am fine, thank you very much.",
		"Pi is 3.14 roughly. Yes! 她说：「好！」然后笑了。",
		"ありがとう。本当。\n\nOK... see you.",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, text := range texts {
		want := Split(text)
		for range 50 {
			s := &Splitter{}
			var got []packets.Segment
			r := []rune(text)
			for len(r) > 0 {
				n := 1 + rng.IntN(6)
				n = min(n, len(r))
				got = append(got, s.Feed(string(r[:n]))...)
				r = r[n:]
			}
			got = append(got, s.Flush()...)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("streamed %q\n got %q\nwant %q", text, got, want)
			}
		}
	}
}

func TestSplitterHandsOutTheFirstSentenceBeforeTheRest(t *testing.T) {
	s := &Splitter{}
	if got := s.Feed("好的，我"); len(got) != 0 {
		t.Fatalf("no sentence has ended, got %q", got)
	}
	got := s.Feed("知道了。然后")
	if len(got) != 1 || got[0].Text != "好的，我知道了。" {
		t.Fatalf("the first sentence should be out once it ends, got %q", got)
	}
	// With FirstClause, the first clause goes out sooner.
	s = &Splitter{FirstClause: 4}
	if got := s.Feed("好的好的好的，我"); len(got) != 1 || got[0].Text != "好的好的好的，" {
		t.Fatalf("the first clause should be out, got %q", got)
	}
	if got := s.Feed("知道了，然后"); len(got) != 0 {
		t.Fatalf("only the first segment ends at a clause, got %q", got)
	}
}

func TestSplitterCutsLongSentences(t *testing.T) {
	long := strings.Repeat("word ", 100)
	segs := Split(long)
	if len(segs) < 3 {
		t.Fatalf("a 500-character sentence should be cut, got %d segments", len(segs))
	}
	for _, s := range segs {
		if n := len([]rune(s.Text)); n > 160 {
			t.Errorf("segment of %d runes", n)
		}
	}
}
