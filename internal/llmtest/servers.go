package llmtest

import (
	"encoding/json"
	"fmt"
	"time"
)

// The model servers whose OpenAI-compatible streams Reply.Server copies.
// Each is written after the server's own source, named with its commit:
//
//   - Ollama: middleware/openai.go (ChatWriter.writeResponse) and
//     openai/openai.go (toChunk, ToStreamChunks, FinishChunk) of
//     github.com/ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7.
//     Every chunk carries "system_fingerprint": "fp_ollama"; reasoning is
//     in "reasoning" and goes in a chunk of its own; the finish reason
//     comes in a chunk with an empty delta; usage (when asked) in one more
//     chunk with no choices; then "data: [DONE]". When the model runner
//     dies mid-answer, server/routes.go (streamResponse) writes
//     {"error": "..."} into the same ChatWriter, which decodes it as an
//     api.ChatResponse (it has no error field) and sends it as a chunk
//     with an empty content delta; then the stream just ends — no finish
//     chunk, no [DONE], and the runner's error never reaches the client.
//   - vLLM: vllm/entrypoints/openai/serving_chat.py
//     (chat_completion_stream_generator) of github.com/vllm-project/vllm
//     at 003fe5932dc9e1b331347894d3cbc5ddfe89e9eb. The first chunk is
//     {"role": "assistant", "content": ""}; with --reasoning-parser the
//     reasoning is in "reasoning_content" deltas; without one
//     (DeltaMessage(content=delta_text)) the model's text is passed as
//     content whole — for a model whose chat template opens "<think>"
//     (QwQ, R1-distill, Qwen3-Thinking-2507) that is the reasoning, a bare
//     "</think>", then the answer. The last text chunk carries the finish
//     reason; then usage; then [DONE].
//   - llama.cpp: tools/server/server-context.cpp (send_partial_response,
//     send_final_response) at fb4026604c67c682f552337ec9b91eced0abd35a and
//     tools/server/server-common.cpp (format_oai_sse) at
//     aa6192d38defc9a5d9fb2987413f71b18f214270 of
//     github.com/ggml-org/llama.cpp. The first chunk's delta is
//     {"role": "assistant", "content": null}; with --reasoning-format none
//     the content carries the think tags as the model wrote them (a
//     template-opened block: only "</think>"); the final chunk has
//     "delta": {} and the finish reason, then [DONE].
//
// The stream replicas are named by the same Flavor as the server replicas
// (replicas.go): Ollama, VLLM (no --reasoning-parser), LlamaCpp
// (--reasoning-format none), and VLLMReasoning below.
const VLLMReasoning Flavor = "vllm-reasoning" // --reasoning-parser (deepseek_r1, qwen3)

// serverStream writes rep as rep.Server streams it. Reply.Reasoning is
// the model's reasoning; a server that passes reasoning as content writes
// it before a bare "</think>" (the chat template opened the block).
// Reply.CutAfter > 0 stops the model after that many runes of text (< 0:
// before any), as the server ends such a stream.
func serverStream(sw *sseWriter, req Request, rep Reply, n int) {
	var w openAIRequest
	json.Unmarshal(req.Body, &w)
	id := fmt.Sprintf("chatcmpl-%s-%d", rep.Server, n)
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any, extra map[string]any) bool {
		c := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		}
		if rep.Server == Ollama {
			c["system_fingerprint"] = "fp_ollama"
		}
		for k, v := range extra {
			c[k] = v
		}
		return sw.event("", c)
	}
	usage := func() bool {
		if w.StreamOptions == nil || !w.StreamOptions.IncludeUsage {
			return true
		}
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{}, "usage": usageOf(rep.Usage)}
		if rep.Server == Ollama {
			c["system_fingerprint"] = "fp_ollama"
		}
		return sw.event("", c)
	}
	text := rep.Text
	reasoning := rep.Reasoning
	if reasoning != "" && (rep.Server == VLLM || rep.Server == LlamaCpp) {
		text = reasoning + "\n</think>\n\n" + text
		reasoning = ""
	}
	first := map[string]any{"role": "assistant", "content": ""}
	if rep.Server == LlamaCpp {
		first["content"] = nil
	}
	if !chunk(first, nil, nil) {
		return
	}
	for _, c := range chunks(reasoning, rep.ChunkSize) {
		field := "reasoning_content"
		if rep.Server == Ollama {
			field = "reasoning"
		}
		if !chunk(map[string]any{field: c}, nil, nil) {
			return
		}
	}
	sent := 0
	for _, c := range chunks(text, rep.ChunkSize) {
		if rep.CutAfter != 0 && sent >= max(rep.CutAfter, 0) {
			if rep.Server == Ollama {
				// routes.go's {"error": …} through ChatWriter: an empty
				// content chunk, then the body ends.
				chunk(map[string]any{"content": ""}, nil, nil)
				return
			}
			// vLLM and llama.cpp report the engine's failure in the
			// stream before closing it.
			sw.event("", map[string]any{"error": map[string]any{"message": "the engine stopped: CUDA error: an illegal memory access was encountered", "type": "InternalServerError", "code": 500}})
			if rep.Server == VLLM || rep.Server == VLLMReasoning {
				sw.raw("", "[DONE]")
			}
			return
		}
		sent += len([]rune(c))
		if !chunk(map[string]any{"content": c}, nil, nil) {
			return
		}
	}
	for i, tc := range rep.ToolCalls {
		var first oaToolCall
		first.Index, first.ID, first.Type = &i, tc.ID, "function"
		first.Function.Name = tc.Name
		if !chunk(map[string]any{"tool_calls": []oaToolCall{first}}, nil, nil) {
			return
		}
		for _, f := range fragments(tc.Arguments, rep.ChunkSize) {
			var frag oaToolCall
			frag.Index = &i
			frag.Function.Arguments = f
			if !chunk(map[string]any{"tool_calls": []oaToolCall{frag}}, nil, nil) {
				return
			}
		}
	}
	final := map[string]any{}
	if rep.Server == VLLM || rep.Server == VLLMReasoning {
		final["content"] = ""
	}
	var extra map[string]any
	if rep.Server == LlamaCpp {
		extra = map[string]any{"timings": map[string]any{"prompt_n": rep.Usage.InputTokens, "predicted_n": rep.Usage.OutputTokens}}
	}
	if !chunk(final, rep.FinishReason, extra) || !usage() {
		return
	}
	sw.raw("", "[DONE]")
}
