// Package testexit ends a package's test binary without the race
// detector's sleep at exit.
//
// Under go test -race, a test binary that passes sleeps one second before
// it exits: the race runtime's atexit_sleep_ms (GORACE), there to let
// goroutines still running at exit show a race. go test runs as many
// binaries at once as the machine has cores, and a sleeping one holds its
// place: on two cores, the suite's 42 packages spent about 20 s of its
// wall time asleep. A race is still caught where it happens: the testing
// package fails the test during which the detector reports it, so a run
// that passed had none; only a goroutine a test leaked past the end of
// every test goes unwatched for that last second. A failed run exits as
// it always did (and prints the detector's summary).
//
// Every package with tests ends them through Main, from its TestMain:
//
//	func TestMain(m *testing.M) { testexit.Main(m) }
//
// or, where TestMain does more, through Exit(m.Run()).
//
// It imports nothing of cyan's.
package testexit

import (
	"os"
	"syscall"
	"testing"
)

// Main runs m's tests and exits with their code.
func Main(m *testing.M) { Exit(m.Run()) }

// Exit ends the test binary with code: a passing race-enabled binary
// exits at once, any other as os.Exit does.
func Exit(code int) {
	if raceEnabled && code == 0 {
		syscall.Exit(0)
	}
	os.Exit(code)
}
