package tools

import (
	"context"
	"strings"
	"testing"
	"time"
)

// limitSandbox is a jailed sandbox with small limits and a timeout far
// above what a stopped program takes, so reaching the timeout is a
// failure, not a stop.
func limitSandbox(t *testing.T, l Limits) (*Sandbox, string) {
	t.Helper()
	needBwrap(t)
	root := t.TempDir()
	j := NewJail(JailOptions{Roots: []string{root}, Limits: l})
	if j.Err() != nil {
		t.Fatalf("no sandbox: %v", j.Err())
	}
	return &Sandbox{Jail: j, Timeout: 60 * time.Second}, root
}

// The defaults stop a fork bomb and a 2 GB allocation, and the result
// says which limit did; what stays inside the limits runs as before.
func TestSandboxLimits(t *testing.T) {
	sb, root := limitSandbox(t, Limits{})
	if !strings.Contains(sb.Jail.String(), "limits: memory 1024 MiB, 256 processes, CPU time 120 s") {
		t.Fatalf("the jail does not say its limits: %s", sb.Jail)
	}
	run := func(cmd string) RunResult {
		t.Helper()
		res, err := sb.Run(context.Background(), []string{"/bin/sh", "-c", cmd}, root, nil)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return res
	}
	cases := []struct {
		name, cmd, note string
	}{
		{"fork bomb", `b() { b | b & }; b; sleep 50`, "stopped: process limit 256"},
		{"2 GB in one buffer (dd)", `dd if=/dev/zero of=/dev/null bs=2G count=1`, "stopped: memory limit 1024 MiB"},
		{"2 GB string (perl)", `perl -e '$x = "a" x (2 << 30); print length($x), "\n"'`, "stopped: memory limit 1024 MiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := run(tc.cmd)
			if res.TimedOut || !strings.Contains(res.Text(), tc.note) {
				t.Fatalf("not stopped by its limit (want %q):\n%.600s", tc.note, res.Text())
			}
			t.Logf("%s → %s", tc.name, strings.SplitN(res.Text(), "\n", 2)[0])
		})
	}
	// Within the limits: 64 processes at once, 512 MiB in one buffer.
	res := run(`for i in $(seq 64); do sleep 1 & done; wait; dd if=/dev/zero of=/dev/null bs=512M count=1 2>&1 | tail -1; echo fine`)
	if res.Exit != 0 || !strings.Contains(res.Output, "fine") || res.Note != "" {
		t.Fatalf("a program within the limits was stopped:\n%s", res.Text())
	}
}

// A CPU-bound loop is stopped at the CPU time limit, and says so.
func TestSandboxCPULimit(t *testing.T) {
	t.Parallel()
	sb, root := limitSandbox(t, Limits{CPUSeconds: 1})
	res, err := sb.Run(context.Background(), []string{"/bin/sh", "-c", "while :; do :; done"}, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut || !strings.Contains(res.Text(), "stopped: CPU time limit 1 s") {
		t.Fatalf("not stopped by the CPU limit:\n%s", res.Text())
	}
}

// A process limit of its own stops a bomb at that number; -1 turns every
// limit off.
func TestSandboxLimitsConfigured(t *testing.T) {
	sb, root := limitSandbox(t, Limits{Processes: 32, MemoryMB: 64, CPUSeconds: -1})
	res, _ := sb.Run(context.Background(), []string{"/bin/sh", "-c", `b() { b | b & }; b; sleep 50`}, root, nil)
	if !strings.Contains(res.Text(), "stopped: process limit 32") {
		t.Fatalf("%.600s", res.Text())
	}
	res, _ = sb.Run(context.Background(), []string{"/bin/sh", "-c", `dd if=/dev/zero of=/dev/null bs=100M count=1`}, root, nil)
	if !strings.Contains(res.Text(), "stopped: memory limit 64 MiB") {
		t.Fatalf("%.600s", res.Text())
	}
	off := NewJail(JailOptions{Roots: []string{root}, Limits: Limits{MemoryMB: -1, Processes: -1, CPUSeconds: -1, DiskMB: -1, TmpMB: -1}})
	if off.Err() != nil || !strings.Contains(off.String(), "no limits") {
		t.Fatalf("limits off: %v %s", off.Err(), off)
	}
}
