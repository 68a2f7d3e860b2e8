package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// TestACutStreamIsAnError: every provider's stream that ends before its
// finish — Ollama's runner dying (no finish chunk, no [DONE]), an
// Anthropic stream with no message_stop — is a *llm.CutError after the
// text it delivered, never a whole answer. A stream that ends with its
// finish is not.
func TestACutStreamIsAnError(t *testing.T) {
	cases := []struct {
		name, provider string
		reply          llmtest.Reply
		cut            bool
	}{
		{"ollama runner dies", "openai", llmtest.Reply{Server: llmtest.Ollama, Text: "half an answer", CutAfter: 4}, true},
		{"ollama whole", "openai", llmtest.Reply{Server: llmtest.Ollama, Text: "a whole answer"}, false},
		{"llama.cpp whole", "openai", llmtest.Reply{Server: llmtest.LlamaCpp, Text: "a whole answer"}, false},
		{"vllm whole", "openai", llmtest.Reply{Server: llmtest.VLLMReasoning, Reasoning: "hm", Text: "a whole answer"}, false},
		{"openai without finish", "openai", llmtest.Reply{Body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half\"}}]}\n\n"}, true},
		{"openai done without finish", "openai", llmtest.Reply{Body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"all\"}}]}\n\ndata: [DONE]\n\n"}, false},
		{"anthropic without message_stop", "anthropic", llmtest.Reply{Body: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"half\"}}\n\n"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.provider, func(o *llm.Options) { o.MaxRetries = -1 })
			f.srv.Enqueue(c.reply)
			var got strings.Builder
			_, err := f.client.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, func(d llm.Delta) error {
				got.WriteString(d.Content)
				return nil
			})
			var cut *llm.CutError
			if errors.As(err, &cut) != c.cut {
				t.Fatalf("err = %v, want a cut: %v", err, c.cut)
			}
			if c.cut && got.Len() == 0 {
				t.Fatal("nothing was delivered before the cut")
			}
			if c.cut && !strings.Contains(err.Error(), "mid-answer") {
				t.Errorf("the error does not say the answer was cut: %v", err)
			}
		})
	}
}
