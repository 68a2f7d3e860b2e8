// Package backoff is cyan's one retry delay: exponential from a base,
// capped, optionally with jitter, and a sleep that ends with its context.
// Every part that retries (the LLM client, recall's indexers, the event
// log's steps, the router's deliveries, the supervisor's restarts of the
// parts — MCP servers and bridges among them) takes a Policy instead of
// writing its own. Sleep waits on the wall clock; a part that takes a
// clock waits with clock.Sleep.
//
// It imports nothing of cyan's.
package backoff
