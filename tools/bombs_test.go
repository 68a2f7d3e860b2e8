package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// bombLimits are small, so each bomb is stopped in a moment.
var bombLimits = Limits{MemoryMB: 64, DiskMB: 64, TmpMB: 32, Processes: 64, CPUSeconds: 30}

// The pages a run shares or keeps in a tmpfs count against its memory:
// a shared mapping, memfds and System V shm past max_memory_mb stop it,
// whether a memory cgroup holds it (the kernel kills in it) or, where
// none can be made, the sandbox's count of its memory does.
func TestSandboxSharedMemoryBombs(t *testing.T) {
	needBwrap(t)
	bombs := []struct{ name, py string }{
		{"MAP_SHARED anonymous", `import mmap
m = mmap.mmap(-1, 512 << 20)
for i in range(0, 512 << 20, 4096): m[i] = 1
print("survived")`},
		{"memfds", `import mmap, os
ms = []
for k in range(12):
    fd = os.memfd_create("b%d" % k)
    os.ftruncate(fd, 48 << 20)
    m = mmap.mmap(fd, 48 << 20)
    for i in range(0, 48 << 20, 4096): m[i] = 1
    ms.append(m)
print("survived")`},
	}
	for _, cgroup := range []bool{true, false} {
		for _, b := range bombs {
			name := b.name + " (memory cgroup)"
			if !cgroup {
				name = b.name + " (count, no cgroup)"
			}
			t.Run(name, func(t *testing.T) {
				sb, root := limitSandbox(t, bombLimits)
				sb.Jail.noMemCap = !cgroup
				if cgroup && newMemCapOrSkip(t) {
					return
				}
				res, err := sb.Run(context.Background(), []string{"/usr/bin/python3", "-c", b.py}, root, nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.TimedOut || strings.Contains(res.Output, "survived") || !strings.Contains(res.Note, "memory limit 64 MiB") {
					t.Fatalf("not stopped by the memory limit:\n%.600s", res.Text())
				}
				t.Logf("→ %s", res.Note)
			})
		}
	}
}

// newMemCapOrSkip skips where no memory cgroup can be made (the count is
// tried all the same); it reports whether it skipped.
func newMemCapOrSkip(t *testing.T) bool {
	t.Helper()
	c := newMemCap(64 << 20)
	if c == nil {
		if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" && os.Geteuid() == 0 {
			t.Fatal("no memory cgroup can be made here as root (CYAN_REQUIRE_TOOLS=1)")
		}
		t.Skip("no memory cgroup can be made here (not root, or no delegated memory controller)")
		return true
	}
	_ = c.remove()
	return false
}

// /tmp and /dev/shm are small tmpfs of their own, /dev is read-only:
// filling them stops at max_tmp_mb, and the result says so.
func TestSandboxTmpfsBombs(t *testing.T) {
	sb, root := limitSandbox(t, bombLimits)
	for _, dir := range []string{"/tmp", "/dev/shm"} {
		t.Run(dir, func(t *testing.T) {
			res, err := sb.Run(context.Background(), []string{"/bin/sh", "-c",
				"dd if=/dev/zero of=" + dir + "/fill bs=1M count=256 2>&1; s=$?; wc -c < " + dir + "/fill; exit $s"}, root, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Output, "No space left on device") || !strings.Contains(res.Output, "\n33554432\n") {
				t.Fatalf("%s held more than 32 MiB:\n%s", dir, res.Text())
			}
			if !strings.Contains(res.Note, "max_tmp_mb") {
				t.Errorf("the result does not say why: %q", res.Note)
			}
		})
	}
	res, _ := sb.Run(context.Background(), []string{"/bin/sh", "-c", "echo x > /dev/fill && echo wrote; echo ok > /dev/null && echo null"}, root, nil)
	if strings.Contains(res.Output, "wrote") || !strings.Contains(res.Output, "Read-only") || !strings.Contains(res.Output, "null") {
		t.Fatalf("/dev is writable, or /dev/null is not:\n%s", res.Text())
	}
}

// A file written into a root stops at max_disk_mb, and so do many files
// each under it: the run's writes are counted and it is stopped whole.
func TestSandboxDiskBombs(t *testing.T) {
	sb, root := limitSandbox(t, bombLimits)
	res, err := sb.Run(context.Background(), []string{"/bin/sh", "-c", "dd if=/dev/zero of=big bs=1M count=256"}, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, "big"))
	if err != nil || fi.Size() > 64<<20 || !strings.Contains(res.Note, "stopped: disk limit 64 MiB") {
		t.Fatalf("one file: %v %v\n%s", fi.Size(), err, res.Text())
	}
	t.Logf("one file → %s", res.Note)

	var st syscall.Statfs_t
	if syscall.Statfs(root, &st) == nil && st.Type == 0x01021994 { // TMPFS_MAGIC
		t.Skip("the test's folder is on tmpfs: writes there are memory, not disk, and are not counted as written")
	}
	res, err = sb.Run(context.Background(), []string{"/bin/sh", "-c", "for i in $(seq 16); do dd if=/dev/zero of=f$i bs=1M count=32 status=none || exit; done; echo survived"}, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), "f") {
			total += fi.Size()
		}
	}
	if strings.Contains(res.Output, "survived") || !strings.Contains(res.Note, "stopped: disk limit 64 MiB") || total >= 512<<20 {
		t.Fatalf("many files: %d bytes written\n%s", total, res.Text())
	}
	t.Logf("many files → %d MiB written, %s", total>>20, res.Note)
}
