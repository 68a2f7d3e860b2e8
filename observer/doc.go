// Package observer will own the background processes attached to main-virtual
// and to each other: time (cron and one-off), activity (bus events), call and
// self-decided triggers; main-observer's passive GC, deferred plans and
// proactive speech; and the per-observer token budgets of the cost governor.
//
// It may import memory, events, tools, llm, config and packets; never daemon,
// api or mainvirtual (main-virtual is reached through interfaces declared here).
package observer
