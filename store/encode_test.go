package store

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// FuzzEncodeMessage holds encodeMessage to json.Marshal, byte for byte,
// for messages of any text, fields and times.
func FuzzEncodeMessage(f *testing.F) {
	f.Add("hello", "Mel", "D1:3", "<b>&</b> \"q\" \\ \b\f\n\r\t\x00\x1f\x7f", "汉字 \u2028\u2029 \xff\xfe", int64(1588291200123456789), 8*3600, 3, false, "")
	f.Add("", "", "", "", "", int64(0), 0, 0, true, "q")
	f.Add("a", "b", "c", "d", "e", int64(-62135596800000000), -5*3600-1800, -7, true, "\xed\xa0\x80")
	f.Add("x", "y", "z", "w", "v", int64(253402300800000000), 0, 1<<40, false, "")
	f.Add("x", "y", "z", "w", "v", int64(1), 24*3600, 1, false, "")
	f.Fuzz(func(t *testing.T, text, user, ext, a, b string, nanos int64, offset, n int, flag bool, quote string) {
		at := time.Unix(0, nanos).In(time.FixedZone("z", offset))
		m := &Message{ID: a, Channel: b, Role: Role(a), User: user, UserID: b, Kind: a, Text: text, Time: at, Tokens: n, ReplyTo: b,
			Step: -n, Part: n / 3, Empty: flag, Proactive: !flag, ToolCallID: a, ToolName: b, Area: ext, ExternalID: ext}
		if quote != "" {
			m.Quotes = []string{quote, text}
			m.ToolCalls = []ToolCall{{ID: a, Name: b, Arguments: text}, {}}
		}
		if flag {
			m.Recalled = at.Add(time.Duration(n))
		}
		if len(quote) == 1 {
			m.Quotes = []string{}
			m.ToolCalls = []ToolCall{}
		}
		want, werr := json.Marshal(m)
		got, gerr := encodeMessage(m)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("encodeMessage = %s, %v\njson.Marshal = %s, %v", got, gerr, want, werr)
		}
	})
}
