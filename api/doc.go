// Package api is cyan's HTTP interface: the native API under /api/v1
// (messages, traces, tools and the owner's approvals), an OpenAI-compatible
// /v1 so existing front-ends can use the companion as a "model", and
// /healthz. Whoever reaches the API is the owner (loopback, or the bearer
// token), so a tool run without "as" is the owner's own.
//
// It listens on loopback by default. Any other bind requires the bearer
// token kept in the data dir; on loopback the Host header is checked against
// DNS rebinding. Bodies are size-limited, and every error is JSON
// {"error": {"message", "type"}} with a message that says what to do.
//
// It may import mainvirtual, tools, packets, events, generate, memory,
// observer, store, llm and config.
package api
