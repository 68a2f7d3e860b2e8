// Package llm is cyan's small provider layer, built on the standard library:
// OpenAI-compatible chat completions (Ollama, llama.cpp, vLLM, LM Studio and
// hosted APIs) and Anthropic's Messages API, each plain and streamed, with
// native tool calls, JSON-schema output, usage, timeouts and retries.
//
// Every failure is an *Error whose Kind says what went wrong and whose message
// says what the user can do about it; the one exception is the caller's
// context ending, which is returned wrapping ctx.Err() and never retried.
// Calls are retried with backoff on 429, 5xx and transport errors, streams
// only until their first delta has reached the caller.
//
// It may import backoff.
package llm
