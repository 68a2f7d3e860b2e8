// Package backoff is cyan's one retry delay: exponential from a base,
// capped, optionally with jitter, and a sleep that ends with its context.
// Every part that retries (the LLM client, recall's indexers, MCP servers,
// the event log's steps, the router's deliveries, the supervisor's
// restarts) takes a Policy instead of writing its own.
//
// It imports nothing of cyan's.
package backoff
