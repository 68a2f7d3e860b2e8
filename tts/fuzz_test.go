package tts

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/packets"
)

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"你好，今天天气很好。こんにちは、元気ですか？I am fine.", "Pi is 3.14. Yes!", "「好！」", "%[a] Line 1 ~ Line 2 @last_n_x", "```go\nx\n```", "안녕.", "\x00\xff",
		"At 18:52, see https://x.test/a?b=1. Ok", "*waves* hi [a](b) ![c](d) <!-- e --> `f` **g**", "1. one\n2. two", "%[history/d/2026-01-01] message 1 ~ message 2。", "(^_^) T_T 😊"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, text string, chunk int) {
		actions := []string{ActionsSkip, ActionsSpeak, ActionsNarrate}[(chunk>>8&0xff)%3]
		ws := &Splitter{Actions: actions}
		whole := append(ws.Feed(text), ws.Flush()...)
		for _, s := range whole {
			if strings.TrimSpace(s.Text) == "" || s.Language == "" || s.Emotion == "" {
				t.Fatalf("empty field in %q", s)
			}
			if !utf8.ValidString(s.Text) {
				t.Fatalf("invalid UTF-8 in %q", s.Text)
			}
		}
		if !utf8.ValidString(text) {
			return
		}
		chunk = 1 + (chunk&0xff)%16
		sp := &Splitter{Actions: actions}
		var got []packets.Segment
		r := []rune(text)
		for len(r) > 0 {
			n := min(chunk, len(r))
			got = append(got, sp.Feed(string(r[:n]))...)
			r = r[n:]
		}
		got = append(got, sp.Flush()...)
		if len(got) != len(whole) {
			t.Fatalf("streamed in %d-rune pieces: %d segments, whole: %d\n%q\n%q", chunk, len(got), len(whole), got, whole)
		}
	})
}

func FuzzParseWAV(f *testing.F) {
	f.Add(PCMWAV(make([]byte, 100), 22050, 1))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVE"))
	f.Add([]byte("RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\"V\x00\x00D\xac\x00\x00\x02\x00\x10\x00data\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ParseWAV(b)
		if err != nil {
			return
		}
		if w.DataOffset+w.DataSize > len(b) || w.DataSize < 0 {
			t.Fatalf("data %d+%d outside %d bytes", w.DataOffset, w.DataSize, len(b))
		}
		_ = w.Duration()
	})
}

// FuzzStream: clips of any bytes never break a stream: each one taken
// adds whole frames of the first one's format.
func FuzzStream(f *testing.F) {
	f.Add(PCMWAV(make([]byte, 100), 22050, 1), PCMWAV(make([]byte, 64), 16000, 2))
	f.Add(PCMWAV(make([]byte, 7), 8000, 2), PCMWAV(make([]byte, 5), 44100, 1))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var s Stream
		first, err := s.Next(Audio{Data: a, Type: "audio/wav"})
		if err != nil {
			return
		}
		w, err := ParseWAV(first)
		if err != nil || w.DataOffset != wavHeaderSize {
			t.Fatalf("the stream's start does not parse: %+v %v", w, err)
		}
		frame := 2 * w.Channels
		if (len(first)-wavHeaderSize)%frame != 0 {
			t.Fatalf("the first clip gives %d bytes of %d-byte frames", len(first)-wavHeaderSize, frame)
		}
		next, err := s.Next(Audio{Data: b, Type: "audio/wav"})
		if err == nil && len(next)%frame != 0 {
			t.Fatalf("the next clip gives %d bytes of %d-byte frames", len(next), frame)
		}
	})
}
