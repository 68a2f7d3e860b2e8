package generate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
)

// BenchmarkCheckAnswer measures the answer path of a call: think blocks
// cut, JSON found in a chatty fenced reply, lax coercion and validation.
func BenchmarkCheckAnswer(b *testing.B) {
	shape, err := CompileShape(json.RawMessage(classify), false)
	if err != nil {
		b.Fatal(err)
	}
	answer := "<think>" + strings.Repeat("let me think. ", 50) + "</think>Sure! Here it is:\n```json\n{\"category\": \"bug\", \"confidence\": \"0.8\"}\n```"
	b.ReportAllocs()
	for b.Loop() {
		a, _ := stripThink(answer)
		if _, _, err := shape.check(a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerate measures a whole call against the fake LLM over
// loopback HTTP, trace kept in an in-memory store: the overhead generate
// adds to a model's own time.
func BenchmarkGenerate(b *testing.B) {
	r := newRig(b)
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: `{"category": "bug", "confidence": 0.8}`}
	})
	req := Request{Name: "bench", Input: "Classify", Shape: json.RawMessage(classify),
		Context: []ContextItem{{Source: "issue", Label: "issue", Value: strings.Repeat("crash on start ", 100), Budget: 200}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.gen.Generate(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
