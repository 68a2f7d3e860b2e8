// Package supervise runs the daemon's long-running parts (the HTTP API,
// the observers, the event log's worker, recall's indexer, the router's
// feed, the MCP servers, the bridges…) and keeps them running, in the
// manner of Syncthing's svcutil: a part that fails or panics is restarted
// after a backoff that grows with each failure in a row (1 s doubling to
// 1 min; a run that lasted a minute counts as healthy and starts over); a
// part whose error is marked Fatal stops the whole daemon, with its
// message; a part that returns nil, or an error marked Done, has finished
// and is not restarted. Cancellation is not an error: it is how
// everything stops.
//
// A part that knows better than the backoff talks to the supervisor in
// two ways, so it never needs a restart loop of its own:
//
//   - RetryAfter(err, d): the run failed, and the part is to start again
//     d after it — a server's retry-after, or a wait the part learned
//     over several runs (the OneBot forward dialer: one connection
//     attempt per run, its waits growing to minutes once the
//     implementation refuses the access token).
//   - Healthy(ctx), during a run: the part has proved itself (connected,
//     logged in, heard from its peer); its last error is cleared and its
//     next failure starts the backoff over, however soon it comes.
//
// Each part's state (running, restarting with its last error and when it
// starts again, stopped, failed) is kept for /healthz and cyan doctor —
// Status is one snapshot of every part, each State's fields taken
// together — and every change is posted on the journal
// (journal.PartState). The waits and the states' times are on the
// supervisor's clock (Options.Clock), so tests advance time instead of
// sleeping.
//
// A hand-written supervisor rather than suture: a per-part backoff from
// package backoff (suture backs the whole tree off after a threshold of
// failures), the states above without an event hook to rebuild them, and
// the daemon's clock.
//
// It may import backoff, clock and journal.
package supervise
