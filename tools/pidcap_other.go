//go:build !linux

package tools

// pidCap needs Linux's pids cgroups; elsewhere the poll alone stops a run
// that passes the process limit.
type pidCap struct{}

func newPidCap(int) *pidCap { return nil }

func (c *pidCap) wrap(argv []string) []string { return argv }

func (c *pidCap) procs() string { return "" }

func (c *pidCap) refused() bool { return false }

func (c *pidCap) remove() error { return nil }
