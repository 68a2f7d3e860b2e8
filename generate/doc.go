// Package generate is cyan's one LLM call primitive for natural tools, after
// AgentScript's generate: a call site that takes an instruction, the agent's
// identity, labelled context items with budgets and an optional output
// shape (a JSON Schema), asks the model, separates reasoning from the
// answer, extracts and validates the value, retries on parse or validation
// failure while attempts remain, and leaves a trace of everything it did.
//
// # Prompt layers
//
// The identity (role, description) and any further system text become the
// system message. The instruction, the context items — each under its
// "[label]" in declaration order, with its source, clipped to its token
// budget — and the required output shape become the final user message:
//
//	Instruction:
//	Summarise the reply.
//
//	Context:
//	[reply]
//	source: message
//	…text…
//
//	Required output shape (JSON Schema):
//	{…}
//	Answer with one JSON value that matches it, and nothing else.
//
// A call with neither context nor shape sends the instruction alone. The
// labels system, assistant, tool and developer are refused: a label names
// what a context item is for, never a provider role. Context text cannot
// forge the layer headers: a line of a value that reads like one ("[x]",
// "Context:", …) is sent with a leading backslash.
//
// # Output
//
// With a shape, the provider is asked for JSON-schema output; an endpoint
// that rejects that request (HTTP 400) is asked again without it, and for
// the next SchemaCooldown the shape is only in the prompt; then schema
// output is tried again. A prompt too long for the window (llm's
// ContextLength) or a missing capability (Unsupported) is not such a
// refusal and leaves schema output on. Reasoning — a provider's
// reasoning field and every <think>…</think> block — is cut from the reply
// and kept in the trace; it is never parsed. The value is the reply when it
// is JSON, else the first fenced block that is, else the first JSON value
// found in the text.
//
// strict: false (the default) coerces "true"/"false" to booleans and numeric
// text ("42", "3.14") to numbers where the shape wants them, matches an enum
// option ignoring case and surrounding space, and takes a reply that holds
// no JSON as the text itself when the shape wants a string; it still needs
// parseable output with every required field. strict: true forbids every
// coercion and rejects fields the shape does not declare (objects without
// "additionalProperties" are treated as closed). strict is cyan's own
// validation: it is never passed to the provider.
//
// A parse or validation failure is retried while attempts remain: the next
// try sends the failed reply back and says what was wrong. A provider
// failure (auth, network, timeout, model not found, quota, a rejected
// request) is not: the llm client has already retried what can be.
//
// # Traces
//
// Every call leaves a Trace: the instruction, the configuration, the context
// items (index, source, label, text, budget, clipped), the rendered
// messages, each attempt's raw output, reasoning and validation, the final
// value, tokens and time. A Traces ring keeps the newest ones in the store.
//
// It may import llm and store.
package generate
