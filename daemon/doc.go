// Package daemon builds every part of cyan in one place, wires them, and
// runs the long-running ones under one supervisor (package supervise,
// parts.go): a part that fails or panics is restarted with backoff, one
// whose error is fatal (the HTTP server's) stops the daemon with its
// message, one the system does not allow (supervise.Done) ends and the
// daemon goes on without it, and SIGINT or SIGTERM (the context ending)
// shuts down within shutdown_timeout (10 s by default) without losing an
// acknowledged message: a part or a store that cannot stop in time is
// named in the log and Run returns an error (shutdown.go). A part that
// must hear what another did (an import, a turn's end, a backup) follows
// the journal.
//
// The chat platforms and voices it builds are the ones that registered
// themselves (package registry): platforms.go imports them, one line each.
//
// It may import every cyan package except cmd.
package daemon
