package generate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
)

// Reasoning tags models write into their content.
var thinkTags = [][2]string{{"<think>", "</think>"}, {"<thinking>", "</thinking>"}}

// stripThink cuts every reasoning block out of s: <think>…</think> (or
// <thinking>…</thinking>) anywhere, a block left open at the end, and a
// leading stretch closed by "</think>" whose opening tag the chat template
// swallowed. It returns the answer and the reasoning, both trimmed.
func stripThink(s string) (answer, reasoning string) {
	var thoughts []string
	for _, tag := range thinkTags {
		open, cls := tag[0], tag[1]
		// A close tag with no open tag before it: everything before it is
		// reasoning.
		if c := indexFold(s, cls); c >= 0 && indexFold(s[:c], open) < 0 {
			thoughts = append(thoughts, s[:c])
			s = s[c+len(cls):]
		}
		for {
			o := indexFold(s, open)
			if o < 0 {
				break
			}
			rest := s[o+len(open):]
			c := indexFold(rest, cls)
			if c < 0 {
				thoughts = append(thoughts, rest)
				s = s[:o]
				break
			}
			thoughts = append(thoughts, rest[:c])
			s = s[:o] + rest[c+len(cls):]
		}
	}
	var parts []string
	for _, t := range thoughts {
		if t = strings.TrimSpace(t); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.TrimSpace(s), strings.Join(parts, "\n\n")
}

// indexFold is strings.Index ignoring ASCII case.
func indexFold(s, sub string) int {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], sub) {
			return i
		}
	}
	return -1
}

var (
	errEmpty  = errors.New("the answer is empty")
	errNoJSON = errors.New("the answer holds no JSON value")
)

// fence matches a fenced code block: ```json … ``` or ``` … ```.
var fence = regexp.MustCompile("(?s)```[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*?)```")

// maxScanStarts bounds how many '{' / '[' positions extractJSON tries, so
// a long reply full of braces costs linear time, not quadratic.
const maxScanStarts = 32

// extractJSON finds the JSON value in a model's answer: the whole answer
// when it is JSON, else the first fenced block that is, else the first
// object or array that decodes from a '{' or '[' in the text. Numbers are
// kept as json.Number. raw is the JSON text the value came from.
func extractJSON(answer string) (v any, raw string, err error) {
	t := strings.TrimSpace(answer)
	if t == "" {
		return nil, "", errEmpty
	}
	if v, ok := decodeWhole(t); ok {
		return v, t, nil
	}
	for _, m := range fence.FindAllStringSubmatch(t, 8) {
		body := strings.TrimSpace(m[1])
		if v, ok := decodeWhole(body); ok {
			return v, body, nil
		}
	}
	tried := 0
	for i := 0; i < len(t) && tried < maxScanStarts; i++ {
		if t[i] != '{' && t[i] != '[' {
			continue
		}
		tried++
		dec := json.NewDecoder(strings.NewReader(t[i:]))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil {
			return v, t[i : i+int(dec.InputOffset())], nil
		}
	}
	return nil, "", errNoJSON
}

// decodeWhole decodes s when it is exactly one JSON value.
func decodeWhole(s string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

// plain re-decodes a json.Number-bearing value into the standard library's
// types (float64 numbers) and returns its JSON text. A number too large for
// a float64 leaves the value's numbers as json.Number.
func plain(v any) (any, json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, nil, err
	}
	raw := bytes.TrimSpace(buf.Bytes())
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&out); err != nil {
			return nil, nil, err
		}
	}
	return out, json.RawMessage(raw), nil
}
