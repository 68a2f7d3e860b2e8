// Package tools will own the tool executor: process tools (action packets, no
// LLM) and natural tools (natural packets run through prompt scripts), the
// extra tool folders, MCP servers, and the permission objects checked before
// every call.
//
// It may import store, llm, config and packets.
package tools
