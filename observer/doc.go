// Package observer runs the processes attached to main-virtual and to each
// other (SPEC §6): each observer has one or more triggers — time (cron
// expressions and one-off times, with missed firings caught up once on
// start), activity (events on the bus: AfterUserMessage, AfterAIResponse,
// MemoryChanged, Keyword, AtStartup, BeforeShutdown — ISDK's names), call
// (another process runs it by name) and self-decided (at a bounded cadence
// it asks itself whether to act now) — a token budget per day that a cost
// governor enforces from provider usage, and quiet hours that hold proactive
// speech.
//
// It may import memory, events, tools, llm, config, packets, store,
// journal and clock.
package observer
