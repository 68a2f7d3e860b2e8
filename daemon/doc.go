// Package daemon builds every part of cyan in one place and runs the
// long-running ones as a group: the first to fail stops all, and SIGINT or
// SIGTERM (the context ending) shuts down within five seconds without
// losing an acknowledged message.
//
// It may import every cyan package except cmd.
package daemon
