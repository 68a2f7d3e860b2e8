package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Limits bound each sandboxed program (tools.terminal.max_memory_mb,
// max_processes, max_cpu_seconds, max_disk_mb, max_tmp_mb). A zero field
// takes its default; a negative one turns that limit off.
//
// They are set inside the sandbox, just before the program starts, with
// prlimit (util-linux): memory as RLIMIT_DATA (the program's heap and
// private mappings, so a runaway allocation fails with ENOMEM, while the
// address space a runtime only reserves, as Go and V8 do, costs nothing),
// CPU time as RLIMIT_CPU (SIGXCPU at the limit, SIGKILL a second later),
// processes as RLIMIT_NPROC, counted in the sandbox's own user namespace,
// and the size of any one file it writes as RLIMIT_FSIZE (max_disk_mb:
// SIGXFSZ past it; memfds too).
//
// What a per-process limit cannot see is held by the run as a whole:
//   - Memory: a memory cgroup (memCap) holds the run's pages, shared ones
//     too (MAP_SHARED anonymous, memfd, System V shm, the tmpfs of /tmp
//     and /dev/shm), and the kernel kills inside it at max_memory_mb.
//     Where no cgroup can be made, the sandbox counts the resident and
//     shared memory of the run's processes while it runs and stops it whole
//     past max_memory_mb (within one count's interval); /tmp and /dev/shm
//     are then held by their size alone.
//   - /tmp and /dev/shm are each a tmpfs of max_tmp_mb (ENOSPC past it),
//     and /dev is read-only, so no tmpfs of the sandbox grows unbounded.
//   - Disk: besides each file's size, the bytes the run's processes write
//     to the disk (the kernel's write_bytes of each, reaped ones included)
//     are counted while it runs and the run is stopped whole past
//     max_disk_mb. This counts writes, not what is left: a build that
//     writes and deletes counts what it wrote. It does not see space
//     reserved without writing (fallocate) beyond each file's size, nor a
//     root on tmpfs (those pages are memory, held by the cgroup).
//   - Processes: the kernel exempts root from RLIMIT_NPROC, so the sandbox
//     also counts the processes of its PID namespace while the program
//     runs and stops it whole at the limit (Sandbox.Run), and where a pids
//     cgroup can be made (pidCap) the kernel refuses every fork past the
//     limit meanwhile, so the bomb never takes the machine's processes
//     even for the poll's interval: a fork bomb ends either way.
type Limits struct {
	MemoryMB   int
	Processes  int
	CPUSeconds int
	DiskMB     int // each file's size, and the bytes a run writes
	TmpMB      int // the size of /tmp and of /dev/shm, each
}

// Default limits: room for a compiler or a test run, not for a fork bomb
// or a 2 GB allocation.
const (
	DefaultMemoryMB   = 1024
	DefaultProcesses  = 256
	DefaultCPUSeconds = 120
	DefaultDiskMB     = 1024
	DefaultTmpMB      = 256
)

func (l Limits) withDefaults() Limits {
	if l.MemoryMB == 0 {
		l.MemoryMB = DefaultMemoryMB
	}
	if l.Processes == 0 {
		l.Processes = DefaultProcesses
	}
	if l.CPUSeconds == 0 {
		l.CPUSeconds = DefaultCPUSeconds
	}
	if l.DiskMB == 0 {
		l.DiskMB = DefaultDiskMB
	}
	if l.TmpMB == 0 {
		l.TmpMB = DefaultTmpMB
	}
	return l
}

func (l Limits) off() bool {
	return l.MemoryMB < 0 && l.Processes < 0 && l.CPUSeconds < 0 && l.DiskMB < 0
}

// String says the limits, as cyan doctor shows them.
func (l Limits) String() string {
	var parts []string
	if l.MemoryMB > 0 {
		parts = append(parts, fmt.Sprintf("memory %d MiB", l.MemoryMB))
	}
	if l.Processes > 0 {
		parts = append(parts, fmt.Sprintf("%d processes", l.Processes))
	}
	if l.CPUSeconds > 0 {
		parts = append(parts, fmt.Sprintf("CPU time %d s", l.CPUSeconds))
	}
	if l.DiskMB > 0 {
		parts = append(parts, fmt.Sprintf("disk writes %d MiB", l.DiskMB))
	}
	if l.TmpMB > 0 {
		parts = append(parts, fmt.Sprintf("/tmp and /dev/shm %d MiB each", l.TmpMB))
	}
	if len(parts) == 0 {
		return "no limits"
	}
	return "limits: " + strings.Join(parts, ", ")
}

// prlimit is the command line that sets the limits, then runs the rest.
func (l Limits) prlimit(prog string) []string {
	a := []string{prog}
	if l.MemoryMB > 0 {
		b := strconv.FormatInt(int64(l.MemoryMB)<<20, 10)
		a = append(a, "--data="+b+":"+b)
	}
	if l.Processes > 0 {
		n := strconv.Itoa(l.Processes)
		a = append(a, "--nproc="+n+":"+n)
	}
	if l.CPUSeconds > 0 {
		a = append(a, fmt.Sprintf("--cpu=%d:%d", l.CPUSeconds, l.CPUSeconds+1))
	}
	if l.DiskMB > 0 {
		b := strconv.FormatInt(int64(l.DiskMB)<<20, 10)
		a = append(a, "--fsize="+b+":"+b)
	}
	return append(a, "--")
}

// outOfMemory are what programs print when an allocation fails: libc's
// strerror(ENOMEM), coreutils, bash, Perl, Python, Go, Node, C++, Java.
var outOfMemory = []string{"Cannot allocate memory", "memory exhausted", "Out of memory!", "out of memory",
	"MemoryError", "std::bad_alloc", "OutOfMemoryError", "xmalloc: cannot allocate", "failed to allocate"}

// cannotFork are what shells print when fork fails with EAGAIN.
var cannotFork = []string{"Cannot fork", "fork: Resource temporarily unavailable", "fork: retry", "can't fork", "fork failed"}

// stoppedBy says which limit ended a program that exited with exit (128+n
// for a signal), from its exit and its output, or "".
func (l Limits) stoppedBy(exit int, output string) string {
	const sigxcpu, sigxfsz = 128 + 24, 128 + 25
	switch {
	case exit == 0:
		return ""
	case l.CPUSeconds > 0 && exit == sigxcpu:
		return fmt.Sprintf("stopped: CPU time limit %d s (tools.terminal.max_cpu_seconds)", l.CPUSeconds)
	case l.DiskMB > 0 && (exit == sigxfsz || strings.Contains(output, "File too large")):
		return l.diskNote()
	case l.TmpMB > 0 && strings.Contains(output, "No space left on device"):
		return fmt.Sprintf("no space left: /tmp and /dev/shm hold %d MiB each (tools.terminal.max_tmp_mb)", l.TmpMB)
	case l.MemoryMB > 0 && containsAny(output, outOfMemory):
		return fmt.Sprintf("stopped: memory limit %d MiB (tools.terminal.max_memory_mb)", l.MemoryMB)
	case l.Processes > 0 && containsAny(output, cannotFork):
		return fmt.Sprintf("stopped: process limit %d (tools.terminal.max_processes)", l.Processes)
	}
	return ""
}

// diskNote says the disk limit stopped a run.
func (l Limits) diskNote() string {
	return fmt.Sprintf("stopped: disk limit %d MiB (tools.terminal.max_disk_mb)", l.DiskMB)
}

// memoryNote says the memory limit stopped a run as a whole.
func (l Limits) memoryNote() string {
	return fmt.Sprintf("stopped: memory limit %d MiB (tools.terminal.max_memory_mb; shared memory and /tmp count)", l.MemoryMB)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// pidNamespace is the PID namespace of the sandbox whose bwrap runs as
// pid: that of bwrap's child, once it exists ("" before).
func pidNamespace(pid int) string {
	own, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return ""
	}
	for _, c := range strings.Fields(string(b)) {
		if ns, err := os.Readlink("/proc/" + c + "/ns/pid"); err == nil && ns != own {
			return ns
		}
	}
	return ""
}

// runSample is what a count of a sandbox's processes found.
type runSample struct {
	procs   int
	memory  int64 // resident anonymous and shared bytes, summed
	written int64 // bytes written to disk, reaped processes included
}

// sampleRun counts the processes of a PID namespace and, when asked,
// their memory (/proc/<pid>/status: RssAnon + RssShmem; shared pages
// mapped by several are counted by each, so the sum errs high) and the
// bytes they wrote (/proc/<pid>/io: write_bytes less
// cancelled_write_bytes; a process's count holds those of the children
// it reaped, so the sandbox's init keeps the dead ones').
func sampleRun(ns string, memory, disk bool) runSample {
	var s runSample
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return s
	}
	for _, e := range entries {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		if got, err := os.Readlink(filepath.Join(dir, "ns/pid")); err != nil || got != ns {
			continue
		}
		s.procs++
		if memory {
			if b, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
				s.memory += procField(b, "RssAnon:") << 10
				s.memory += procField(b, "RssShmem:") << 10
			}
		}
		if disk {
			if b, err := os.ReadFile(filepath.Join(dir, "io")); err == nil {
				s.written += procField(b, "write_bytes:") - procField(b, "cancelled_write_bytes:")
			}
		}
	}
	return s
}

// procField reads the number after key at the start of a line of a /proc
// file ("RssShmem:     1024 kB").
func procField(b []byte, key string) int64 {
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// tmpfs is bwrap's arguments that mount a tmpfs of the size of TmpMB at
// dest, when bwrap can size one (sized: bwrap 0.7 and later; an older one
// leaves the tmpfs at the kernel's default, half the memory, and only the
// memory cgroup holds it).
func (l Limits) tmpfs(dest string, sized bool) []string {
	if l.TmpMB > 0 && sized {
		return []string{"--size", strconv.FormatInt(int64(l.TmpMB)<<20, 10), "--tmpfs", dest}
	}
	return []string{"--tmpfs", dest}
}
