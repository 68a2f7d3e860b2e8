package importer

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestJSONL(t *testing.T) {
	in := `{"time": "2024-05-01T21:30:00+08:00", "channel": "home", "user": "nyalia", "text": "hello", "id": "m1"}

{"time": "2024-05-01T21:31:00+08:00", "channel": "home", "user": "cyan", "role": "assistant", "text": "hi"}
{"time": "yesterday", "channel": "home", "user": "x", "text": "bad"}
`
	j := NewJSONL(strings.NewReader(in), "")
	m, err := j.Next()
	if err != nil || m.Channel != "home" || m.ExternalID != "m1" || m.Role != "user" || !m.Time.Equal(time.Date(2024, 5, 1, 13, 30, 0, 0, time.UTC)) {
		t.Fatalf("line 1: %+v %v", m, err)
	}
	m, err = j.Next()
	if err != nil || m.Role != "assistant" || j.Line() != 3 {
		t.Fatalf("line 3: %+v %v (line %d)", m, err, j.Line())
	}
	_, err = j.Next()
	var le *LineError
	if !errors.As(err, &le) || le.Line != 4 || !strings.Contains(err.Error(), "RFC 3339") {
		t.Fatalf("line 4: %v", err)
	}
	if _, err := j.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
}

func TestParseLineErrors(t *testing.T) {
	for _, tc := range []struct{ name, line, channel, want string }{
		{"no channel", `{"time": "2024-05-01T00:00:00Z", "user": "a", "text": "x"}`, "", "--channel"},
		{"channel flag fills it", `{"time": "2024-05-01T00:00:00Z", "user": "a", "text": "x"}`, "home", ""},
		{"unknown field", `{"time": "2024-05-01T00:00:00Z", "channel": "c", "text": "x", "colour": 1}`, "", "unknown field"},
		{"empty text", `{"time": "2024-05-01T00:00:00Z", "channel": "c", "text": "  "}`, "", "empty"},
		{"bad role", `{"time": "2024-05-01T00:00:00Z", "channel": "c", "text": "x", "role": "robot"}`, "", "robot"},
		{"two values", `{"time": "2024-05-01T00:00:00Z", "channel": "c", "text": "x"} {}`, "", "more than one"},
		{"control char channel", `{"time": "2024-05-01T00:00:00Z", "channel": "a\u0001b", "text": "x"}`, "", "control"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLine([]byte(tc.line), tc.channel)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

const sample = `[{"sample_id": "conv-x", "conversation": {"speaker_a": "Ann", "speaker_b": "Bo",
 "session_2_date_time": " 9:00 AM on  2 June 2023",
 "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "back again"}],
 "session_1_date_time": "1:56 pm on 8 May, 2023",
 "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "hi"},
               {"speaker": "Bo", "dia_id": "D1:02", "text": "look", "img_url": ["u"], "blip_caption": "a photo of a cat"}]},
 "qa": [{"question": "q?", "answer": 2022, "evidence": ["D1:2", "D:2:1", "D1:1; D2:1", "D", "D01:002", "D2:1,D1:1"], "category": 2},
        {"question": "adversarial", "evidence": [], "category": 5}]}]`

func TestParseLoCoMo(t *testing.T) {
	convs, err := ParseLoCoMo([]byte(sample), "")
	if err != nil {
		t.Fatal(err)
	}
	c := convs[0]
	if c.Channel != "conv-x" || len(c.Messages) != 3 || len(c.QA) != 2 {
		t.Fatalf("conversation: %+v", c)
	}
	m := c.Messages
	if !m[2].Time.Equal(time.Date(2023, 6, 2, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("session 2's time: %v", m[2].Time)
	}
	if m[0].ExternalID != "D1:1" || m[1].ExternalID != "D1:2" || m[2].ExternalID != "D2:1" || !m[1].Time.Equal(time.Date(2023, 5, 8, 13, 57, 0, 0, time.UTC)) {
		t.Fatalf("order or times: %+v %+v %+v", m[0], m[1], m[2])
	}
	if m[1].Text != "look [shares a photo: a photo of a cat]" || m[1].User != "Bo" {
		t.Fatalf("caption: %q", m[1].Text)
	}
	if got := strings.Join(c.QA[0].Evidence, ","); got != "D1:2,D2:1,D1:1" || c.QA[0].Answer != "2022" {
		t.Fatalf("evidence %q answer %q", got, c.QA[0].Answer)
	}
	if convs, _ := ParseLoCoMo([]byte(sample), "one"); convs[0].Channel != "one" || convs[0].Messages[0].Channel != "one" {
		t.Fatal("--channel not applied")
	}
	for _, bad := range []string{`{}`, `[{"sample_id": "x", "conversation": {"session_1": [], "session_1_date_time": "soon"}}]`} {
		if _, err := ParseLoCoMo([]byte(bad), ""); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// FuzzParseLine: no input line panics; an accepted line makes a message
// that the store would accept.
func FuzzParseLine(f *testing.F) {
	f.Add(`{"time": "2024-05-01T21:30:00+08:00", "channel": "home", "user": "nyalia", "text": "hello", "id": "m1"}`, "")
	f.Add(`{"time": "2024-05-01T21:30:00Z", "text": "x"}`, "c")
	f.Add(`{"time": 1}`, "")
	f.Add(`[]`, "")
	f.Fuzz(func(t *testing.T, line, channel string) {
		m, err := ParseLine([]byte(line), channel)
		if err != nil {
			return
		}
		if m.Channel == "" || m.Time.IsZero() || strings.TrimSpace(m.Text) == "" {
			t.Fatalf("accepted an incomplete message: %+v", m)
		}
	})
}

// FuzzParseLoCoMo: no input panics.
func FuzzParseLoCoMo(f *testing.F) {
	f.Add(sample)
	f.Add(`[]`)
	f.Add(`[{"conversation": {"session_x": 1}}]`)
	f.Fuzz(func(t *testing.T, data string) {
		convs, err := ParseLoCoMo([]byte(data), "")
		if err != nil {
			return
		}
		for _, c := range convs {
			for _, m := range c.Messages {
				if m.ExternalID == "" || m.Time.IsZero() {
					t.Fatalf("incomplete message %+v", m)
				}
			}
		}
	})
}
