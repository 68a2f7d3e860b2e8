package generate

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            bool
	}{
		{"whole", ` {"a": 1} `, `{"a":1}`, false},
		{"scalar", `0.9`, `0.9`, false},
		{"string", `"x"`, `"x"`, false},
		{"fenced", "Here you go:\n```json\n{\"a\": [1, 2]}\n```\nBye", `{"a":[1,2]}`, false},
		{"bare fence", "```\n[true]\n```", `[true]`, false},
		{"chatty", `Sure! The answer is {"a": {"b": "}"}} — hope it helps {"c": 2}`, `{"a":{"b":"}"}}`, false},
		{"first valid", `Use {this} or {"a": 1}`, `{"a":1}`, false},
		{"array", `result: [1, {"x": null}] done`, `[1,{"x":null}]`, false},
		{"empty", "   ", "", true},
		{"none", "no json here", "", true},
		{"broken", `{"a": `, "", true},
		{"big number kept", `{"n": 12345678901234567890}`, `{"n":12345678901234567890}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, raw, err := extractJSON(tt.in)
			if tt.err {
				if err == nil {
					t.Fatalf("want an error, got %v", v)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(v)
			if string(b) != tt.want {
				t.Errorf("value %s, want %s", b, tt.want)
			}
			if !json.Valid([]byte(raw)) {
				t.Errorf("raw %q is not JSON", raw)
			}
		})
	}
}

func TestStripThink(t *testing.T) {
	tests := []struct{ in, answer, reasoning string }{
		{"plain", "plain", ""},
		{"<think>a</think>b", "b", "a"},
		{"x <THINK>a</THINK> y", "x  y", "a"},
		{"<thinking>a</thinking>b", "b", "a"},
		{"a</think>b", "b", "a"},
		{"b<think>never closed", "b", "never closed"},
		{"<think>1</think>x<think>2</think>y", "xy", "1\n\n2"},
	}
	for _, tt := range tests {
		a, r := stripThink(tt.in)
		if a != tt.answer || r != tt.reasoning {
			t.Errorf("stripThink(%q) = %q, %q; want %q, %q", tt.in, a, r, tt.answer, tt.reasoning)
		}
	}
}

// FuzzExtract feeds model answers, untrusted text, through the answer
// path: think blocks are cut, a value found is JSON, and nothing panics.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		`{"a": 1}`, "```json\n{\"a\": 1}\n```", `<think>{"x":1}</think>{"y":2}`, `a</think>{"b": [1,2]}`,
		`[{"a": "}"}]`, "{{{{[[[[", `"str"`, "<thinking>", "```", "\x00{\"a\":\"\\u0000\"}",
	} {
		f.Add(s)
	}
	shape, err := CompileShape(json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"},"ok":{"type":"boolean"}},"required":["n"]}`), false)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		answer, reasoning := stripThink(s)
		if strings.Contains(strings.ToLower(answer), "<think>") && !strings.Contains(strings.ToLower(reasoning+s), "</think>") {
			// an unclosed block is all reasoning: no open tag may survive
			t.Fatalf("an open think tag survived in %q", answer)
		}
		v, raw, err := extractJSON(answer)
		if err == nil {
			if !json.Valid([]byte(raw)) {
				t.Fatalf("raw %q is not JSON", raw)
			}
			if _, _, err := plain(v); err != nil {
				t.Fatalf("value of %q does not re-encode: %v", raw, err)
			}
		}
		_, _, _ = shape.check(answer)
	})
}
