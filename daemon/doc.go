// Package daemon builds every part of cyan in one place and runs the
// long-running ones as a group: the first to fail stops all, and SIGINT or
// SIGTERM (the context ending) shuts down within shutdown_timeout (10 s by
// default) without losing an acknowledged message: a part or a store that
// cannot stop in time is named in the log and Run returns an error
// (shutdown.go).
//
// It may import every cyan package except cmd.
package daemon
