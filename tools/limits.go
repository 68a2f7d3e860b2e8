package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Limits bound each sandboxed program (tools.terminal.max_memory_mb,
// max_processes, max_cpu_seconds). A zero field takes its default; a
// negative one turns that limit off.
//
// They are set inside the sandbox, just before the program starts, with
// prlimit (util-linux): memory as RLIMIT_DATA (the program's heap and
// private mappings, so a runaway allocation fails with ENOMEM, while the
// address space a runtime only reserves, as Go and V8 do, costs nothing),
// CPU time as RLIMIT_CPU (SIGXCPU at the limit, SIGKILL a second later),
// and processes as RLIMIT_NPROC, counted in the sandbox's own user
// namespace. The kernel exempts root from RLIMIT_NPROC, so the sandbox
// also counts the processes of its PID namespace while the program runs
// and stops it whole at the limit (Sandbox.Run), and where a pids cgroup
// can be made (pidCap) the kernel refuses every fork past the limit
// meanwhile, so the bomb never takes the machine's processes even for the
// poll's interval: a fork bomb ends either way.
type Limits struct {
	MemoryMB   int
	Processes  int
	CPUSeconds int
}

// Default limits: room for a compiler or a test run, not for a fork bomb
// or a 2 GB allocation.
const (
	DefaultMemoryMB   = 1024
	DefaultProcesses  = 256
	DefaultCPUSeconds = 120
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
	return l
}

func (l Limits) off() bool { return l.MemoryMB < 0 && l.Processes < 0 && l.CPUSeconds < 0 }

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
	const sigxcpu = 128 + 24
	switch {
	case exit == 0:
		return ""
	case l.CPUSeconds > 0 && exit == sigxcpu:
		return fmt.Sprintf("stopped: CPU time limit %d s (tools.terminal.max_cpu_seconds)", l.CPUSeconds)
	case l.MemoryMB > 0 && containsAny(output, outOfMemory):
		return fmt.Sprintf("stopped: memory limit %d MiB (tools.terminal.max_memory_mb)", l.MemoryMB)
	case l.Processes > 0 && containsAny(output, cannotFork):
		return fmt.Sprintf("stopped: process limit %d (tools.terminal.max_processes)", l.Processes)
	}
	return ""
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

// countProcesses counts the processes of a PID namespace.
func countProcesses(ns string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		if got, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns/pid")); err == nil && got == ns {
			n++
		}
	}
	return n
}
