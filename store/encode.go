package store

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// encodeMessage is json.Marshal(m), byte for byte, written without
// reflection: a stored message is the same JSON as ever (any reader of
// the store, old or new, decodes it with encoding/json), at a fraction of
// the cost an import pays a message. FuzzEncodeMessage holds it to
// json.Marshal; a message json.Marshal refuses (a time outside years 0
// to 9999, a zone offset of a day or more) gets the error json.Marshal
// gives its time.
func encodeMessage(m *Message) ([]byte, error) { return encodeMessageAs(m, m.ID) }

// encodeMessageAs is encodeMessage(m) for m with id as its ID, without
// reading m.ID (an import's workers encode messages whose ids are being
// given beside them).
func encodeMessageAs(m *Message, id string) ([]byte, error) {
	for _, t := range []time.Time{m.Time, m.Recalled} {
		if !strictTime(t) {
			if _, err := json.Marshal(t); err != nil {
				return nil, err // the error json.Marshal(m) returns
			}
		}
	}
	b := make([]byte, 0, 160+len(m.Text)+len(m.User)+len(m.ExternalID))
	b = append(b, `{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"channel":`...)
	b = appendJSONString(b, m.Channel)
	b = append(b, `,"role":`...)
	b = appendJSONString(b, string(m.Role))
	b = appendField(b, `,"user":`, m.User)
	b = appendField(b, `,"user_id":`, m.UserID)
	b = appendField(b, `,"kind":`, m.Kind)
	b = append(b, `,"text":`...)
	b = appendJSONString(b, m.Text)
	b = append(b, `,"time":"`...)
	b = append(m.Time.AppendFormat(b, time.RFC3339Nano), '"')
	b = appendInt(b, `,"tokens":`, m.Tokens)
	b = appendField(b, `,"reply_to":`, m.ReplyTo)
	b = appendInt(b, `,"step":`, m.Step)
	b = appendInt(b, `,"part":`, m.Part)
	if m.Empty {
		b = append(b, `,"empty":true`...)
	}
	if m.Proactive {
		b = append(b, `,"proactive":true`...)
	}
	if m.Incomplete {
		b = append(b, `,"incomplete":true`...)
	}
	if len(m.Quotes) > 0 {
		b = append(b, `,"quotes":[`...)
		for i, q := range m.Quotes {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, q)
		}
		b = append(b, ']')
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendJSONString(b, c.ID)
			b = append(b, `,"name":`...)
			b = appendJSONString(b, c.Name)
			b = append(b, `,"arguments":`...)
			b = appendJSONString(b, c.Arguments)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendField(b, `,"tool_call_id":`, m.ToolCallID)
	b = appendField(b, `,"tool_name":`, m.ToolName)
	b = appendField(b, `,"area":`, m.Area)
	b = appendField(b, `,"external_id":`, m.ExternalID)
	if !m.Recalled.IsZero() {
		b = append(b, `,"recalled":"`...)
		b = append(m.Recalled.AppendFormat(b, time.RFC3339Nano), '"')
	}
	return append(b, '}'), nil
}

// strictTime: t encodes as time.Time.MarshalJSON encodes it, without
// its error.
func strictTime(t time.Time) bool {
	if y := t.Year(); y < 0 || y > 9999 {
		return false
	}
	_, off := t.Zone()
	return off > -24*3600 && off < 24*3600
}

// appendField appends an omitempty string field.
func appendField(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, name...), s)
}

// appendInt appends an omitempty int field.
func appendInt(b []byte, name string, n int) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, name...), int64(n), 10)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes a string
// (encode.go, appendString with HTML escaping): <, > and & escaped,
// invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
