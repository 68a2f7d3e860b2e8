package script

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: `{"summary": "short"}`} })
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

// BenchmarkLoadCached measures what every step pays before it runs: the
// library's cached Load, which checks by stat that the persona has not
// added, changed or removed an override since the script was parsed.
func BenchmarkLoadCached(b *testing.B) {
	r := newRig(b)
	persona := b.TempDir()
	if err := os.MkdirAll(filepath.Join(persona, ScriptsDir), 0o700); err != nil {
		b.Fatal(err)
	}
	override := "---\nextends: remember\n---\nsystem:\n  notes: [Be brief.]\n"
	if err := os.WriteFile(filepath.Join(persona, ScriptsDir, "remember.ai.yaml"), []byte(override), 0o600); err != nil {
		b.Fatal(err)
	}
	lib, err := NewLibrary(LibraryOptions{Generator: r.gen, PersonaDir: func() string { return persona }})
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"event_title", "remember"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := lib.Load(name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCallExtraction measures one event_extraction step through
// Library.Call — the largest built-in script, with structured inputs (12
// known objects, 20 known lines, a 40-message conversation) — against the
// fake LLM: inputs to JSON values, checks, rendering, the HTTP call,
// validation and decoding.
func BenchmarkCallExtraction(b *testing.B) {
	r := newRig(b)
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: `{"facts":[{"object":"kemo","kind":"person","text":"studies RAG"}],"lines":[],"reinforce":["l3"],"contradict":[]}`}
	})
	lib, err := NewLibrary(LibraryOptions{Generator: r.gen})
	if err != nil {
		b.Fatal(err)
	}
	type object struct {
		Name   string   `json:"name"`
		Kind   string   `json:"kind"`
		Blocks []string `json:"blocks"`
	}
	type line struct{ ID, A, B, Text string }
	var objects []object
	var lines []line
	var conv strings.Builder
	for i := range 12 {
		objects = append(objects, object{Name: fmt.Sprintf("person%d", i), Kind: "person", Blocks: []string{"likes tea", "works nights"}})
	}
	for i := range 20 {
		lines = append(lines, line{ID: fmt.Sprintf("l%d", i), A: "kemo", B: fmt.Sprintf("person%d", i%12), Text: "they study together"})
	}
	for i := range 40 {
		fmt.Fprintf(&conv, "[2026-02-16 10:%02d] kemo: message number %d about retrieval and graphs\n", i, i)
	}
	in := map[string]any{"conversation": conv.String(), "title": "kemo asked me about RAG", "agent_name": "青蓝", "objects": objects, "known_lines": lines}
	b.ReportAllocs()
	for b.Loop() {
		var out map[string]any
		if err := lib.Call(context.Background(), "event_extraction", "home", in, &out); err != nil {
			b.Fatal(err)
		}
	}
}
