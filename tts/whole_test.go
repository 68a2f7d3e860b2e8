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
		{"a url with a query", "See https://example.com/a?b=1&c=2.html now. Ok", []string{"See a link now.", "Ok"}},
		{"a url ending a sentence", "Look at https://example.com/x. It is good", []string{"Look at a link.", "It is good"}},
		{"a url in chinese", "看看https://example.com/a.b?c，好吗？", []string{"看看链接，好吗？"}},
		{"a reference with a range", "读 %[notes/a.b?.md] Line 3 ~ Line 9。好的！", []string{"读 链接。", "好的！"}},
		// The voice keeps phrases whole (inline lists, abbreviations,
		// paths, units) and says a short word for a link.
		{"an inline numbered list", "Steps: 1. open the lid 2. add the water 3. stir. Done", []string{"Steps: 1. open the lid 2. add the water 3. stir.", "Done"}},
		{"an inline list after a comma", "Do this, 1. wash 2. dry. Ok", []string{"Do this, 1. wash 2. dry.", "Ok"}},
		{"an age ends a sentence", "I am 30. Then I left", []string{"I am 30.", "Then I left"}},
		{"an initialism", "The U.S. office is closed. Sorry", []string{"The U.S. office is closed.", "Sorry"}},
		{"an initialism ends a sentence", "I live in the U.S. It is big", []string{"I live in the U.S.", "It is big"}},
		{"a time of day", "Meet at 3 p.m. today. Ok", []string{"Meet at 3 p.m. today.", "Ok"}},
		{"a degree", "Dr. Smith, Ph.D. will come. Ok", []string{"Dr. Smith, Ph.D. will come.", "Ok"}},
		{"a german abbreviation", "Wir treffen uns ca. um drei. Gut", []string{"Wir treffen uns ca. um drei.", "Gut"}},
		{"a month", "It is due Jan. 5 this year. Ok", []string{"It is due Jan. 5 this year.", "Ok"}},
		{"a windows path", `The file is C:\Users\me\a.txt and it is big. Ok`, []string{`The file is C:\Users\me\a.txt and it is big.`, "Ok"}},
		{"a windows path ends a sentence", `Saved to D:\work\notes.md. Done`, []string{`Saved to D:\work\notes.md.`, "Done"}},
		{"a home path", "Open ~/notes/today.md now. Ok", []string{"Open ~/notes/today.md now.", "Ok"}},
		{"degrees celsius", "It is -3.5°C outside. Brr", []string{"It is -3.5 degrees Celsius outside.", "Brr"}},
		{"degrees fahrenheit", "It is 90 °F. Hot", []string{"It is 90 degrees Fahrenheit.", "Hot"}},
		{"degrees of an angle", "Turn 45° left. Ok", []string{"Turn 45 degrees left.", "Ok"}},
		{"degrees in chinese", "外面是-3.5°C。好冷", []string{"外面是-3.5摄氏度。", "好冷"}},
		{"a link in japanese", "これを見て https://example.com ね。はい", []string{"これを見て リンク ね。", "はい"}},
		{"a link and a reference", "See https://example.com/a?b=1 and %[notes/x.md] for more. Ok", []string{"See a link and a link for more.", "Ok"}},
		{"a history reference", "See %[history/desktop/2026-11-25] message 2 ~ message 5. Done", []string{"See a link.", "Done"}},
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
