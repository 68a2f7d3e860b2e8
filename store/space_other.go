//go:build !unix

package store

// defaultDisk is nil where statfs is unavailable: the store then writes
// without the guard, as Badger alone would.
func defaultDisk() diskInfo { return nil }
