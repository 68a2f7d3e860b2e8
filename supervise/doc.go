// Package supervise runs the daemon's long-running parts (the HTTP API,
// the observers, the event log's worker, recall's indexer, the router's
// feed, the bridges…) and keeps them running, in the manner of
// Syncthing's svcutil: a part that fails or panics is restarted after a
// backoff that grows with each failure in a row (1 s doubling to 1 min;
// a run that lasted a minute counts as healthy and starts over); a part
// whose error is marked Fatal stops the whole daemon, with its message;
// a part that returns nil, or an error marked Done, has finished and is
// not restarted. Cancellation is not an error: it is how everything
// stops.
//
// Each part's state (running, restarting with its last error and when it
// tries again, stopped, failed) is kept for /healthz and cyan doctor, and
// every change is posted on the journal (journal.PartState).
//
// A hand-written supervisor rather than suture: a per-part backoff from
// package backoff (suture backs the whole tree off after a threshold of
// failures), the states above without an event hook to rebuild them, and
// the daemon's clock.
//
// It may import backoff and journal.
package supervise
