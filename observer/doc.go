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
// Main is main-observer and the persona's observers on the Manager: the
// work after each turn (memory.AfterTurn; the owner is the one the turn
// acted for or a configured owner, a turn is private unless in a group),
// one observer per deferred plan (due at its time or on its cron
// schedule, firing under its maker's permission — never a gone
// component's), self-decided speech in the configured channels, and the
// persona's declared observers, each reading only the channels its own
// permission shows it and waking main-virtual (a Waker) under that
// permission.
//
// It may import memory, events, tools, llm, config, packets, store,
// journal, clock and turn.
package observer
