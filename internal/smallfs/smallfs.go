//go:build linux

package smallfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Mount mounts a tmpfs of size bytes on a new temporary folder and returns
// it; the test's cleanup unmounts it. Where mounting is not allowed the
// test skips (or fails under CYAN_REQUIRE_TOOLS=1).
func Mount(t testing.TB, size int64) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cyan-smallfs-")
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		_ = os.Remove(dir)
		msg := fmt.Sprintf("cannot mount a %d-byte tmpfs (%v): this test needs root or CAP_SYS_ADMIN", size, err)
		if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" {
			t.Fatal(msg + "; CYAN_REQUIRE_TOOLS=1 forbids skipping")
		}
		t.Skip(msg)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
		_ = os.Remove(dir)
	})
	return dir
}

// Free is the space left on the filesystem of path, in bytes.
func Free(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// Fill writes a file of zeros at path until the filesystem has at most
// leave bytes free (0: until it is full) and returns its size. The file is
// synced, so its blocks are really taken.
func Fill(path string, leave int64) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var n int64
	for {
		free, err := Free(filepath.Dir(path))
		if err != nil {
			return n, err
		}
		if free <= leave {
			break
		}
		chunk := min(int64(len(buf)), free-leave)
		w, err := f.Write(buf[:chunk])
		n += int64(w)
		if errors.Is(err, unix.ENOSPC) {
			break
		}
		if err != nil {
			return n, err
		}
	}
	return n, f.Sync()
}
