//go:build unix && !linux

package store

import "os"

// allocateFile does nothing where fallocate is unavailable; the guard's
// free-space check alone keeps the disk from filling.
func allocateFile(string) error { return nil }

// reserveFile writes a file of size zeros (no fallocate here), removing it
// again when the disk has no room for it.
func reserveFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for n := int64(0); n < size && err == nil; n += int64(len(buf)) {
		_, err = f.Write(buf[:min(int64(len(buf)), size-n)])
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}
