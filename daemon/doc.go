// Package daemon builds every part of cyan in one place and runs the
// long-running ones under one supervisor (package supervise): a part that
// fails or panics is restarted with backoff, one whose error is fatal
// stops the daemon with its message, and SIGINT or
// SIGTERM (the context ending) shuts down within shutdown_timeout (10 s by
// default) without losing an acknowledged message: a part or a store that
// cannot stop in time is named in the log and Run returns an error
// (shutdown.go).
//
// The chat platforms and voices it builds are the ones that registered
// themselves (package registry): platforms.go imports them, one line each.
//
// It may import every cyan package except cmd.
package daemon
