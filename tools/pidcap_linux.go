package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// pidCap is a pids cgroup that holds one sandboxed run: the kernel refuses
// a fork past its pids.max, so a fork bomb can never take more than the
// process limit from the machine, whoever runs the daemon. RLIMIT_NPROC
// cannot do this for root (the kernel exempts it), and the process count
// that Sandbox.Run polls stops a bomb only after it has grown for a poll's
// interval — long enough, on a small machine, to leave other programs
// unable to fork. The cap makes the poll's stop the only effect.
//
// It uses the pids controller where this process may make a child cgroup:
// cgroup v1's pids hierarchy, or v2 where the controller is delegated to
// our own cgroup. Where neither is open (a user without delegation), the
// run goes on with the poll alone.
type pidCap struct {
	dir string
}

var pidCapSeq atomic.Uint64

// newPidCap makes a cgroup that lets max processes live in it, or nil when
// none can be made here.
func newPidCap(max int) *pidCap {
	name := fmt.Sprintf("cyan-sandbox-%d-%d", os.Getpid(), pidCapSeq.Add(1))
	for _, parent := range pidsParents() {
		dir := filepath.Join(parent, name)
		if os.Mkdir(dir, 0o755) != nil {
			continue
		}
		if os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0o644) != nil {
			_ = os.Remove(dir)
			continue
		}
		return &pidCap{dir: dir}
	}
	return nil
}

// pidsParents lists where a pids cgroup may be made: v1's hierarchy, then
// our own v2 cgroup.
func pidsParents() []string {
	var out []string
	if fi, err := os.Stat("/sys/fs/cgroup/pids"); err == nil && fi.IsDir() {
		out = append(out, "/sys/fs/cgroup/pids")
	}
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "0::"); ok {
				// Only a cgroup2 mount has cgroup.controllers: on a hybrid
				// host /sys/fs/cgroup itself is a plain tmpfs, where a
				// "cgroup" would be files that cap nothing.
				for _, mnt := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
					dir := filepath.Join(mnt, filepath.Clean("/"+rest))
					if _, err := os.Stat(filepath.Join(dir, "cgroup.controllers")); err == nil {
						out = append(out, dir)
					}
				}
			}
		}
	}
	return out
}

// procs is the file a process writes its pid to, to join the cgroup.
func (c *pidCap) procs() string { return filepath.Join(c.dir, "cgroup.procs") }

// wrap runs argv inside the cgroup (joinCgroups).
func (c *pidCap) wrap(argv []string) []string { return joinCgroups(argv, []string{c.procs()}) }

// refused reports whether the cap refused a fork.
func (c *pidCap) refused() bool {
	b, err := os.ReadFile(filepath.Join(c.dir, "pids.events"))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) == 2 && f[0] == "max" && f[1] != "0"
}

// remove deletes the cgroup once its processes are gone (they were
// killed; their exit may take a moment).
func (c *pidCap) remove() error { return removeCgroup(c.dir) }

// removeCgroup deletes a cgroup's folder once its processes are gone:
// their exit may take a moment after the kill, so it tries for up to half a
// second.
func removeCgroup(dir string) error {
	var err error
	for range 50 {
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}
