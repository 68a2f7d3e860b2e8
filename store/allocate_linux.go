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
