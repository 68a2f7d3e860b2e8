package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// allocateFile reserves the blocks of a file's whole length without
// changing it (fallocate with KEEP_SIZE), so writes through a memory map
// into its holes never need space the disk no longer has.
func allocateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, st.Size())
}

// reserveFile creates a file of size bytes with its blocks taken
// (fallocate), removing it again when the disk has no room for it.
func reserveFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, size)
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
