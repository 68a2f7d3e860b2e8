//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LockFile is the name of the data dir's lock file; it holds the pid of
// the daemon that owns the dir.
const LockFile = "cyan.lock"

// dirLock is an exclusive flock on <data dir>/cyan.lock, held for the life of
// the store; the kernel drops it when the process dies, even by kill -9.
type dirLock struct{ f *os.File }

func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := ""
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
		}
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("store: %s%s: %w", dir, holder, ErrLocked)
		}
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}

// Holder returns the pid recorded in a data dir's lock file and whether a
// live daemon holds the lock now. It takes no lock of its own for longer
// than the check.
func Holder(dir string) (pid int, held bool, err error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	if b, err := os.ReadFile(path); err == nil {
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return pid, true, nil
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return pid, false, nil
}
