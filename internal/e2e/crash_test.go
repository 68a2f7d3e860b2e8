package e2e

import (
	"os"
	"strconv"
	"testing"

	"github.com/cyan-agent/cyan/internal/crash"
)

// TestCrashHarness runs the crash harness on the real binary: two cycles
// always (so the harness itself keeps working: a kill, a start on the
// killed store, a second kill and start on the recovered one, then the
// check of every acknowledged message; each start after a kill costs the
// store's damage scan, so more cycles add time, not proof, here), and
// CYAN_CRASH_CYCLES when set
// (the full run: `CYAN_CRASH_CYCLES=500 go test -run CrashHarness
// ./internal/e2e`, or `cyan bench crash --cycles 500`), with the fault of
// CYAN_CRASH_FAULT (disk-full or slow-disk; they need root).
func TestCrashHarness(t *testing.T) {
	t.Parallel()
	cycles := 2
	if v := os.Getenv("CYAN_CRASH_CYCLES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CYAN_CRASH_CYCLES=%q is not a positive number", v)
		}
		cycles = n
	}
	rep, err := crash.Run(t.Context(), crash.Options{Binary: binary, Cycles: cycles, Clients: 2, Fault: os.Getenv("CYAN_CRASH_FAULT"), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if !rep.OK() || rep.Acknowledged == 0 || rep.Cycles != cycles {
		t.Fatalf("the crash harness found problems:\n%s", rep)
	}
}
