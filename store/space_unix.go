//go:build unix

package store

import "golang.org/x/sys/unix"

// osDisk asks the kernel.
type osDisk struct{}

func (osDisk) free(path string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}

func (osDisk) identity(path string) (dev, ino uint64, err error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, 0, err
	}
	return uint64(st.Dev), uint64(st.Ino), nil
}

func (osDisk) allocate(path string) error { return allocateFile(path) }

func (osDisk) reserve(path string, size int64) error { return reserveFile(path, size) }

func defaultDisk() diskInfo { return osDisk{} }
