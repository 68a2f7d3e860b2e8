// Package llm is cyan's small provider layer, built on the standard library:
// OpenAI-compatible chat completions (Ollama, llama.cpp, vLLM, LM Studio and
// hosted APIs) and Anthropic's Messages API, each plain and streamed, with
// native tool calls, JSON-schema output, usage, timeouts and retries.
//
// Every failure is an *Error whose Kind says what went wrong and whose message
// says what the user can do about it.
//
// It imports nothing of cyan's.
package llm
