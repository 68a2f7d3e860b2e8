// Package scripttest is a test rig for code that runs prompt scripts: a
// script library with its generator on the fake LLM of internal/llmtest,
// traces kept in an in-memory store, and golden files of the provider
// messages a script rendered.
//
// It may import script, generate, llm, store and internal/llmtest.
package scripttest
