// Package llmtest is a fake LLM server for tests. It speaks the real wire
// protocols — OpenAI chat completions and Anthropic Messages, each plain and
// streamed as server-sent events — so code under test goes through the same
// llm client it uses in production.
//
// Its zero value is ready:
//
//	var s llmtest.Server
//	ts := httptest.NewServer(&s)
//	s.Enqueue(llmtest.Reply{Text: "hello"})
//
// It plays scripted replies in order (text, reasoning, tool calls, errors,
// delays, hangs), records every request it receives, and rejects requests
// the real APIs would reject (missing model, broken role alternation, tool
// results that answer no call), so protocol mistakes show up in tests.
//
// Reply.Server streams an OpenAI-compatible answer as a given model server
// does — Ollama, vLLM with and without a reasoning parser, llama.cpp with
// --reasoning-format none — each copied from the server's source (file and
// commit in servers.go), including how each ends a stream when the model
// stops mid-answer (Reply.CutAfter).
//
// It may import llm.
package llmtest
