// Package journal is cyan's one event log: everything that happens and that
// another part may want to follow travels on it as a typed Event with a
// monotonic id — messages in and out, history imported, reply deltas while
// a reply streams, a turn ended, the workspace changed, a plan due,
// proactive speech, tool approvals, a scheduled backup, bridge, voice and
// part states. It is the one way a part tells others what happened: no
// part takes a callback or a private channel for these. Syncthing's lib/events is the
// model: ids that only grow (also across restarts), Since(id) reads, and
// subscriptions that never silently drop.
//
// Posting never blocks on a reader. The newest events stay in memory (a
// ring); durable ones (every kind but the transient reply deltas) are also
// written to the store, in batches, by the journal's own writer, and the
// newest Retain of them are kept there. A subscriber is a cursor, not a
// buffer: Next returns what came after it, from memory while it keeps up
// and from the store when it fell behind the ring, so nothing durable is
// ever lost to a slow reader. A transient event that left the ring before
// a reader got to it cannot be read again: the reader gets a Gap event
// saying so (its ID is 0; the events around it are in order).
//
// Other packages add kinds of their own: a Kind is a string, the payload
// is JSON (Event.Decode reads it into the poster's own type).
//
// Beside the standard library it uses badger; channel filters match with
// package glob, the one matcher. It may import glob. Every other package
// may depend on it.
package journal
