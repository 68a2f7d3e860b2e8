//go:build !linux

package tools

// memCap needs Linux's memory cgroups; elsewhere the poll alone counts a
// run's memory.
type memCap struct{}

func newMemCap(int64) *memCap { return nil }

func (c *memCap) procs() string { return "" }

func (c *memCap) oomKills() int { return 0 }

func (c *memCap) remove() error { return nil }
