// Package archive moves everything cyan remembers in and out of a data
// dir: backups, restores, exports and imports of exports, and scheduled
// backups.
//
// # Backups
//
// A backup (WriteBackup) is a consistent copy of the whole database, taken
// while the daemon runs: a gzip stream holding one JSON header line
// ({"format": "cyan-backup", "version": 1, "created", "cyan"}) and then
// Badger's own backup stream of every key at one read timestamp. Restore
// loads it into a data dir without a database. A backup is for this same
// program; to read your data with another tool, export it.
//
// # Exports (format "cyan-export", version 1)
//
// An export (Export) is JSON lines, every line one object:
//
//	{"format": "cyan-export", "version": 1, "created": RFC 3339, "cyan": version}
//	{"type": "channel", "channel": {"name", "created"}}
//	{"type": "message", "message": {"id", "channel", "role", "user", "user_id",
//	    "kind", "text", "time", "reply_to", "step", "part", "empty", "proactive",
//	    "tool_calls", "tool_call_id", "tool_name", "external_id", …}}
//	{"type": "compressed", "id": message id, "compressed": {"text", "time", "trace_id"}}
//	{"type": "record", "space": name, "key": text | "key_b64": base64,
//	    "value": JSON | "value_b64": base64}
//
// The header comes first, then every channel, then each channel's messages
// in order (oldest first), the compressed forms of the companion's older
// replies, and then the records of the other kinds of memory, each kind in
// key order. A record's space names what it is:
//
//	workspace      the workspace: items (key "i\u0000<id>") with their
//	               memory state R, S, D, a, last_T; plans ("p\u0000<id>");
//	               the turn counters
//	event          the event log's records: topics, days, weeks, months,
//	               years (title, importance, memory state, source messages)
//	event_id, event_first, event_pending, topic_cursor, rollup_mark,
//	rollup_dirty, rollup_fail
//	               the event log's indexes and its work in progress
//	object, object_name
//	               people, agents and things, with their info blocks
//	relation       relation lines between two objects, with their weights
//	theory         theory packets
//	observer       the observers' last runs and spent budgets
//
// A record's key is the key after its space's prefix, as text when it is
// UTF-8 (a NUL separates its parts) and as key_b64 otherwise; its value is
// the stored JSON itself, or value_b64 when it is not JSON. A message is
// the stored JSON itself, so fields a later version adds survive a round
// trip. What is derived from the rest (the recall index and embeddings,
// the arrival log) is not exported; it is rebuilt. Traces, approvals and
// idempotency keys are working state, not memories, and are left out.
//
// Import takes an export back into a store, losslessly: exporting the
// result gives the same lines (but the header's time). What the store
// already holds wins: a message or record whose id or key exists is kept
// as it is, and counted as kept. A later version of the format is
// refused with a message naming it.
//
// A scheduled backup, made or failed, is posted on the store's journal
// (journal.BackupDone).
//
// It may import store, journal and clock.
package archive
