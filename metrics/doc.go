// Package metrics holds cyan's Prometheus metrics: one registry the daemon
// builds, the collectors the parts feed, a follower of the journal that
// counts the turns and scheduled backups it tells of (Follow), and the
// handler behind GET /metrics (the API's guard protects it as every
// route). The names:
//
//	cyan_turns_total{kind, proactive, outcome}      turns of main-virtual: answered, failed, interrupted
//	cyan_turn_seconds{kind}                         an answered turn, from its message stored to its end (histogram)
//	cyan_model_requests_total{provider, step, account, outcome}
//	                                                model calls: step is main-virtual or the prompt script's
//	                                                name, account the observer whose budget paid (foreground: none)
//	cyan_model_tokens_total{provider, step, account, direction}   input and output tokens
//	cyan_model_errors_total{provider, step, kind}   failed model calls by kind (unreachable, timeout, …)
//	cyan_model_request_seconds{provider, step}      a model call's duration (histogram)
//	cyan_tool_calls_total{tool, decision}           tool calls the model made: allow, deny, confirm, and limited
//	cyan_recall_seconds{mode, via}                  a recall's duration (histogram): search or tool, from the API or the tool
//	cyan_store_bytes{part}                          the database's size on disk: lsm, vlog
//	cyan_store_writable                             1 while the store takes writes, 0 when its disk is full or its folder gone
//	cyan_store_disk_free_bytes                      free space on the data dir's disk
//	cyan_messages_total                             messages stored (the arrival log's length)
//	cyan_backups_total{outcome}                     scheduled backups made and failed
//
// and, read from the parts the daemon wires (Gauges, Counters):
//
//	cyan_journal_events_total                       events posted on the journal
//	cyan_outbox_pending{component}                  deliveries waiting for a component (a bridge)
//	cyan_outbox_deliveries_total{component, outcome}  delivered and failed for good
//	cyan_component_attached{component}              1 while a component takes deliveries
//	cyan_events_rollups_due                         the event log's summaries still due
//	cyan_bridge_connected{bridge, platform}         1 while a chat-app bridge is connected
//	cyan_bridge_offline{bridge}                     1 while its account is logged out, the connection up
//	cyan_bridge_silent{bridge}                      1 while a busy bridge has heard nothing (probed)
//	cyan_bridge_queue{bridge}                       a bridge's outgoing messages waiting
//	cyan_bridge_messages_total{bridge, what}        received, stored, skipped, turns, sent, failed
//	cyan_part_state{part, state}                    1 for each supervised part's state
//	cyan_part_restarts_total{part}                  restarts of each supervised part
//
// plus the Go runtime's and the process's own (go_*, process_*).
//
// It may import llm, store and journal.
package metrics
