package script

import (
	"context"
	"os"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
)

// BenchmarkParse measures parsing a script with templates, structured
// system messages, inputs, an output schema and context items.
func BenchmarkParse(b *testing.B) {
	src, err := os.ReadFile("testdata/triage.ai.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("triage.ai.yaml", src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunCompress measures one run of the built-in compress script
// against the fake LLM: input checks, rendering, the call and validation.
func BenchmarkRunCompress(b *testing.B) {
	r := newRig(b)
	r.fake.Default = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: `{"summary": "short"}`} }
	s, err := Find("compress", "")
	if err != nil {
		b.Fatal(err)
	}
	in := map[string]any{"text": "Here are three ramen places near Shibuya: Ichiran, Afuri and Fuunji; all open until late.", "agent_name": "青蓝"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Run(context.Background(), r.gen, in, RunOptions{Channel: "home"}); err != nil {
			b.Fatal(err)
		}
	}
}
