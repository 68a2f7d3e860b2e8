// Package observer runs the processes attached to main-virtual and to each
// other (SPEC §6): each observer has one or more triggers — time (cron
// expressions and one-off times, with missed firings caught up once on
// start), activity (ISDK's names: AfterUserMessage, AfterAIResponse — an
// answered turn — and MemoryChanged, which it follows on the journal;
// Keyword, a user message with one of its words; AtStartup and
// BeforeShutdown, its own start and stop), call (another process runs it
// by name) and self-decided (at a bounded cadence
// it asks itself whether to act now) — a token budget per day that a cost
// governor enforces from provider usage, and quiet hours that hold proactive
// speech.
//
// It may import memory, events, tools, llm, config, packets, store,
// journal and clock.
package observer
