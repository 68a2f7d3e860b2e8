package llm

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll parses a whole stream; err is the error that ended it, nil for
// io.EOF.
func readAll(r io.Reader) ([]sseEvent, error) {
	sr := newSSEReader(r)
	var evs []sseEvent
	for {
		ev, err := sr.next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestSSE(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []sseEvent
	}{
		{"openai", "data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n", []sseEvent{{Data: `{"a":1}`}, {Data: `{"a":2}`}}},
		{"done ends the stream", "data: 1\n\ndata: [DONE]\n\ndata: 2\n\n", []sseEvent{{Data: "1"}}},
		{"anthropic", "event: message_start\ndata: {}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n",
			[]sseEvent{{Event: "message_start", Data: "{}"}, {Event: "ping", Data: `{"type": "ping"}`}}},
		{"multi-line data", "data: a\ndata: b\ndata:\ndata:c\n\n", []sseEvent{{Data: "a\nb\n\nc"}}},
		{"comments and unknown fields", ": keep-alive\nid: 7\nretry: 100\ndata: x\n\n: bye\n", []sseEvent{{Data: "x"}}},
		{"crlf", "event: e\r\ndata: x\r\n\r\ndata: y\r\n\r\n", []sseEvent{{Event: "e", Data: "x"}, {Data: "y"}}},
		{"cr", "data: x\r\rdata: y\r\r", []sseEvent{{Data: "x"}, {Data: "y"}}},
		{"one space stripped", "data:  two\n\n", []sseEvent{{Data: " two"}}},
		{"event without data is dropped", "event: a\n\ndata: x\n\n", []sseEvent{{Data: "x"}}},
		{"cut off at the end", "data: {\"last\":true}", []sseEvent{{Data: `{"last":true}`}}},
		{"field without colon", "data\n\n", []sseEvent{{Data: ""}}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.input), iotest.OneByteReader(strings.NewReader(tt.input))} {
				got, err := readAll(r)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
			}
		})
	}
}

func TestSSEReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: 1\n\ndata: 2"), iotest.ErrReader(boom))
	evs, err := readAll(r)
	if !errors.Is(err, boom) || len(evs) != 1 {
		t.Errorf("events %v err %v, want one event then boom", evs, err)
	}
}

// encodeSSE writes events back as a stream.
func encodeSSE(evs []sseEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Event != "" {
			b.WriteString("event: " + ev.Event + "\n")
		}
		for _, line := range strings.Split(ev.Data, "\n") {
			b.WriteString("data: " + line + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzSSE checks that any input parses without panicking, that events never
// hold a line break other than the "\n" joining data lines, and that
// writing the events back and parsing them again gives the same events.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("event: message_start\r\ndata: {}\r\n\r\n: c\r\n"))
	f.Add([]byte("data: a\rdata: b\r\r"))
	f.Fuzz(func(t *testing.T, in []byte) {
		evs, err := readAll(strings.NewReader(string(in)))
		if err != nil {
			t.Fatalf("error on in-memory input: %v", err)
		}
		for _, ev := range evs {
			if strings.ContainsAny(ev.Event, "\r\n") || strings.Contains(ev.Data, "\r") {
				t.Fatalf("line break kept in %+v", ev)
			}
			if ev.Data == "[DONE]" {
				t.Fatalf("[DONE] returned as an event")
			}
		}
		again, err := readAll(strings.NewReader(encodeSSE(evs)))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, evs) && !(len(again) == 0 && len(evs) == 0) {
			t.Fatalf("round trip changed events:\n%q\n%q", evs, again)
		}
	})
}
