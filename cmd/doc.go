// Package cmd is cyan's command line: serve runs the daemon; the other
// commands (chat, send, history, trace, doctor, config check, version) talk
// to a running daemon over its HTTP API or inspect the setup. cmd/cyan is a
// thin main around Main.
//
// Flags may come before or after positional arguments; every command
// answers --help.
//
// It may import every cyan package.
package cmd
