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
// Options.Timeout bounds each try as a whole, a stream's last byte
// included: keep-alive comments do not stretch it.
//
// Local servers differ, and the package knows how: a prompt too long for
// the server's window is a ContextLength error and a missing capability
// (an Ollama model without tools, vLLM without --enable-auto-tool-choice)
// an Unsupported one, each with the fix for the server that sent it;
// ProbeWindow reads the window (Ollama's /api/show and /api/ps, vLLM's
// and llama.cpp's /v1/models, llama.cpp's /props); ThinkOff goes on the
// wire as the server takes it (reasoning_effort "none" for Ollama,
// chat_template_kwargs for vLLM and llama.cpp), and a server that refuses
// it is not sent it for ThinkOffCooldown. Check probes what cyan's turns
// and steps use: a tool and a JSON step.
//
// It may import backoff.
package llm
