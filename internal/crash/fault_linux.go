package crash

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// fault sets up and perturbs the disk under the data dir.
//   - disk-full: a 512 MB tmpfs with min_free 224 MB; before a cycle, often
//     a file takes all but a little less than min_free, so writes are
//     refused (507) until a later cycle frees it.
//   - slow-disk: a 1 GB ext4 loop device; the daemon runs in a blkio cgroup
//     whose writes are throttled to a random 20–200 operations a second
//     (or not at all) each cycle.
type fault struct {
	mode      string
	mount     string // where the data dir's disk is mounted ("": none)
	minFreeMB int
	filler    string
	loop      string // the loop device (slow-disk)
	image     string
	cgroup    string // the cgroup folder (slow-disk)
	cgroupV2  bool
	device    string // MAJ:MIN of the loop device
}

func newFault(mode, dir string) (*fault, error) {
	f := &fault{mode: mode}
	switch mode {
	case FaultNone:
		return f, nil
	case FaultDiskFull, FaultSlowDisk:
	default:
		return nil, fmt.Errorf("crash: unknown fault %q; use %s or %s", mode, FaultDiskFull, FaultSlowDisk)
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("crash: the %s fault mounts a disk of its own and needs root", mode)
	}
	f.mount = filepath.Join(dir, "disk")
	if err := os.MkdirAll(f.mount, 0o700); err != nil {
		return nil, err
	}
	if mode == FaultDiskFull {
		f.minFreeMB = 224
		f.filler = filepath.Join(f.mount, "filler")
		if err := unix.Mount("tmpfs", f.mount, "tmpfs", 0, "size=512m,mode=0700"); err != nil {
			return nil, fmt.Errorf("crash: mount a tmpfs: %w", err)
		}
		return f, nil
	}
	if err := f.slowDisk(dir); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// slowDisk makes the loop device, its filesystem and the cgroup.
func (f *fault) slowDisk(dir string) error {
	f.image = filepath.Join(dir, "disk.img")
	if err := os.WriteFile(f.image, nil, 0o600); err != nil {
		return err
	}
	if err := os.Truncate(f.image, 1<<30); err != nil {
		return err
	}
	out, err := exec.Command("losetup", "--find", "--show", f.image).Output()
	if err != nil {
		return fmt.Errorf("crash: losetup (from the mount package) made no loop device: %w", err)
	}
	f.loop = strings.TrimSpace(string(out))
	if out, err := exec.Command("mkfs.ext4", "-q", f.loop).CombinedOutput(); err != nil {
		return fmt.Errorf("crash: mkfs.ext4 (from e2fsprogs): %v: %s", err, out)
	}
	if err := unix.Mount(f.loop, f.mount, "ext4", 0, ""); err != nil {
		return fmt.Errorf("crash: mount %s: %w", f.loop, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(f.loop, &st); err != nil {
		return err
	}
	f.device = fmt.Sprintf("%d:%d", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))
	name := fmt.Sprintf("cyan-crash-%d", os.Getpid())
	switch {
	case exists("/sys/fs/cgroup/blkio"):
		f.cgroup = filepath.Join("/sys/fs/cgroup/blkio", name)
	case exists("/sys/fs/cgroup/cgroup.controllers"):
		f.cgroup, f.cgroupV2 = filepath.Join("/sys/fs/cgroup", name), true
		_ = os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+io"), 0)
	default:
		return errors.New("crash: no blkio (cgroup v1) or io (cgroup v2) controller to slow the disk with")
	}
	if err := os.Mkdir(f.cgroup, 0o755); err != nil {
		return fmt.Errorf("crash: make the cgroup: %w", err)
	}
	return f.throttle(0)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// throttle limits the cgroup's writes to iops a second (0: no limit).
func (f *fault) throttle(iops int) error {
	if f.cgroupV2 {
		v := "max"
		if iops > 0 {
			v = strconv.Itoa(iops)
		}
		return os.WriteFile(filepath.Join(f.cgroup, "io.max"), []byte(f.device+" wiops="+v), 0)
	}
	return os.WriteFile(filepath.Join(f.cgroup, "blkio.throttle.write_iops_device"), []byte(fmt.Sprintf("%s %d", f.device, iops)), 0)
}

// enter puts a daemon's process into the cgroup (slow-disk).
func (f *fault) enter(pid int) {
	if f.cgroup != "" {
		_ = os.WriteFile(filepath.Join(f.cgroup, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
	}
}

// perturb changes the fault before a cycle.
func (f *fault) perturb(rng *rand.Rand) {
	switch f.mode {
	case FaultDiskFull:
		_ = os.Remove(f.filler)
		if rng.IntN(10) < 4 {
			leave := int64(f.minFreeMB-rng.IntN(40)-1) << 20
			_ = fill(f.filler, leave)
		}
	case FaultSlowDisk:
		_ = f.throttle([]int{0, 200, 50, 20}[rng.IntN(4)])
	}
}

// clear ends the fault's effect (for a verification pass).
func (f *fault) clear() {
	switch f.mode {
	case FaultDiskFull:
		_ = os.Remove(f.filler)
	case FaultSlowDisk:
		_ = f.throttle(0)
	}
}

func (f *fault) close() {
	if f.mount != "" {
		_ = unix.Unmount(f.mount, unix.MNT_DETACH)
	}
	if f.loop != "" {
		_ = exec.Command("losetup", "-d", f.loop).Run()
	}
	if f.image != "" {
		_ = os.Remove(f.image)
	}
	if f.cgroup != "" {
		_ = os.Remove(f.cgroup)
	}
}

// fill writes zeros to path until the disk has at most leave bytes free.
func fill(path string, leave int64) error {
	fd, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer fd.Close()
	buf := make([]byte, 1<<20)
	for {
		var st unix.Statfs_t
		if err := unix.Statfs(filepath.Dir(path), &st); err != nil {
			return err
		}
		free := int64(st.Bavail) * int64(st.Bsize)
		if free <= leave {
			return fd.Sync()
		}
		if _, err := fd.Write(buf[:min(int64(len(buf)), free-leave)]); err != nil {
			return fd.Sync()
		}
	}
}
