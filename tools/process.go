package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Sandbox runs programs for the terminal and for extra tools: each in its
// own process group, killed as a group at the timeout (and when the
// program's first process ends, so nothing it started in the background is
// left), with a scrubbed environment, a fixed working folder and an output
// cap that keeps the head and the tail.
type Sandbox struct {
	Timeout time.Duration // 0: 30s
	// MaxOutput is the output kept, in bytes (half head, half tail); 0: 16 KiB.
	MaxOutput int
	// Env names the variables passed from the daemon's environment besides
	// PATH, HOME, USER, LANG, LC_ALL, TZ and TMPDIR; names that look like
	// secrets are never passed.
	Env    []string
	Getenv func(string) string // nil: os.Getenv
	// Jail confines the programs (nil: unconfined, as for MCP servers the
	// owner configured); ReadOnly names folders it shows besides the roots.
	Jail     *Jail
	ReadOnly []string
	// Network keeps the daemon's network for the program (an extra tool
	// that declares the network effect); otherwise the jail has none.
	Network bool
}

// RunResult is a finished program.
type RunResult struct {
	Output   string // stdout and stderr, interleaved, capped
	Exit     int    // -1 when killed
	TimedOut bool
	// Cut is the number of output bytes dropped from the middle.
	Cut  int64
	Note string
	// PGID is the process group the program ran in.
	PGID int
}

var secretName = regexp.MustCompile(`(?i)(key|token|secret|passw|credential|auth|cookie|session|private)|^CYAN_`)

// environ builds the scrubbed environment plus extra KEY=VALUE pairs.
func (s *Sandbox) environ(extra ...string) []string {
	get := s.Getenv
	if get == nil {
		get = os.Getenv
	}
	env := []string{"TERM=dumb"}
	seen := map[string]bool{"TERM": true}
	for _, name := range append([]string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TZ", "TMPDIR"}, s.Env...) {
		if seen[name] || secretName.MatchString(name) {
			continue
		}
		seen[name] = true
		if v := get(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	if !seen["PATH"] || get("PATH") == "" {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	return append(env, extra...)
}

// hardLimit is the output after which a program is stopped: it is past any
// use, only cut away.
func (s *Sandbox) hardLimit() int64 { return max(8<<20, 64*int64(s.maxOutput())) }

func (s *Sandbox) maxOutput() int {
	if s.MaxOutput <= 0 {
		return 16 << 10
	}
	return s.MaxOutput
}

func (s *Sandbox) timeout() time.Duration {
	if s.Timeout <= 0 {
		return 30 * time.Second
	}
	return s.Timeout
}

// Run runs argv in dir with stdin, the extra environment added.
func (s *Sandbox) Run(ctx context.Context, argv []string, dir string, stdin io.Reader, extraEnv ...string) (RunResult, error) {
	if len(argv) == 0 {
		return RunResult{}, errors.New("nothing to run")
	}
	if s.Jail != nil {
		wrapped, err := s.Jail.Wrap(argv, dir, s.ReadOnly, s.Network)
		if err != nil {
			return RunResult{}, err
		}
		argv = wrapped
	}
	// A pids cgroup caps the run at its process limit (and bwrap's own
	// two processes) and a memory cgroup at its memory, where they can be
	// made; the watch below stops it.
	var pids *pidCap
	var mem *memCap
	if s.Jail != nil && s.Jail.prlimit != "" {
		var join []string
		if l := s.Jail.limits; l.Processes > 0 {
			if pids = newPidCap(l.Processes + 2); pids != nil {
				join = append(join, pids.procs())
				defer func() { _ = pids.remove() }()
			}
		}
		if l := s.Jail.limits; l.MemoryMB > 0 && !s.Jail.noMemCap {
			if mem = newMemCap(int64(l.MemoryMB) << 20); mem != nil {
				join = append(join, mem.procs())
				defer func() { _ = mem.remove() }()
			}
		}
		argv = joinCgroups(argv, join)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = s.environ(extraEnv...)
	cmd.Stdin = stdin
	setGroup(cmd)
	r, w, err := os.Pipe()
	if err != nil {
		return RunResult{}, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return RunResult{}, fmt.Errorf("cannot start %s: %w", argv[0], err)
	}
	w.Close()
	pgid := cmd.Process.Pid

	buf := newCapBuffer(s.maxOutput())
	overflow := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		var once sync.Once
		chunk := make([]byte, 32<<10)
		for {
			n, err := r.Read(chunk)
			buf.Write(chunk[:n])
			if buf.total > s.hardLimit() {
				once.Do(func() { close(overflow) })
			}
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	limited, stopWatch := s.watchRun(pgid, pids, mem)
	defer stopWatch()

	res := RunResult{PGID: pgid}
	timer := time.NewTimer(s.timeout())
	defer timer.Stop()
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-timer.C:
		res.TimedOut = true
		res.Note = fmt.Sprintf("killed after %s (the timeout), with every process it started", s.timeout())
	case <-overflow:
		res.Note = fmt.Sprintf("stopped: it wrote more than %d bytes", s.hardLimit())
	case why := <-limited:
		res.Note = why + ", with every process it started"
	case <-ctx.Done():
		res.Note = "stopped: the call was cancelled"
	}
	killGroup(pgid)
	if waitErr == nil && (res.Note != "") {
		waitErr = <-exited
	}
	if res.Note == "" && pids != nil && pids.refused() {
		// It ended on its own, but the cap refused it a fork on the way.
		res.Note = fmt.Sprintf("a fork was refused at the process limit %d (tools.terminal.max_processes)", s.Jail.limits.Processes)
	}
	if res.Note == "" && mem != nil && mem.oomKills() > 0 {
		// It ended before the watch saw the kill the limit made.
		res.Note = s.Jail.limits.memoryNote()
	}
	select {
	case <-readDone:
	case <-time.After(2 * time.Second):
		// A process left the group (setsid) and holds the pipe.
		res.Note = strings.TrimPrefix(res.Note+"; a process that left its group still holds the output open", "; ")
	}
	r.Close()
	res.Output, res.Cut = buf.String(), buf.cut()
	res.Exit = cmd.ProcessState.ExitCode()
	if res.Exit < 0 || res.Note != "" {
		res.Exit = -1
	}
	if s.Jail != nil && s.Jail.prlimit != "" && res.Note == "" {
		if why := s.Jail.limits.stoppedBy(res.Exit, res.Output); why != "" {
			res.Note = fmt.Sprintf("exit %d; %s", res.Exit, why)
		}
	}
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) && res.Note == "" {
		return res, waitErr
	}
	return res, nil
}

// Text renders a result for the model.
func (r RunResult) Text() string {
	var b strings.Builder
	if r.Note != "" {
		fmt.Fprintf(&b, "[%s]\n", r.Note)
	} else {
		fmt.Fprintf(&b, "[exit %d]\n", r.Exit)
	}
	b.WriteString(r.Output)
	return b.String()
}

// capBuffer keeps the first half and the last half of its budget.
type capBuffer struct {
	max   int
	head  []byte
	tail  []byte // ring
	pos   int
	total int64
}

func newCapBuffer(max int) *capBuffer { return &capBuffer{max: max} }

func (c *capBuffer) Write(p []byte) {
	c.total += int64(len(p))
	half := c.max / 2
	if n := min(half-len(c.head), len(p)); n > 0 {
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	tailMax := c.max - half
	for _, b := range p {
		if len(c.tail) < tailMax {
			c.tail = append(c.tail, b)
			continue
		}
		c.tail[c.pos] = b
		c.pos = (c.pos + 1) % tailMax
	}
}

func (c *capBuffer) cut() int64 {
	return c.total - int64(len(c.head)) - int64(len(c.tail))
}

func (c *capBuffer) String() string {
	tail := append(append([]byte(nil), c.tail[c.pos:]...), c.tail[:c.pos]...)
	if cut := c.cut(); cut > 0 {
		return strings.ToValidUTF8(string(c.head), "") + fmt.Sprintf("\n[… %d bytes cut …]\n", cut) + strings.ToValidUTF8(string(tail), "")
	}
	return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD")
}

// processWatch is how often a sandbox's processes are counted (each count
// reads the whole of /proc). A variable so that a test about something
// else than the process limit can count less often.
var processWatch = 20 * time.Millisecond

// watchRun counts the processes of the sandbox that bwrap (pid) made
// while it runs, and sends which limit the run passed, once: the process
// limit (RLIMIT_NPROC does not hold for root: Limits), or a fork its pids
// cgroup (pc, when there is one) refused; the memory limit, once its
// memory cgroup (mc) killed in it, or, without one, once the count of its
// resident and shared memory passes it; the disk limit, once the bytes it
// wrote pass it. stop ends the watch and waits for it.
func (s *Sandbox) watchRun(pid int, pc *pidCap, mc *memCap) (over <-chan string, stop func()) {
	ch := make(chan string, 1)
	if s.Jail == nil || s.Jail.prlimit == "" {
		return ch, func() {}
	}
	l := s.Jail.limits
	countMemory := mc == nil && l.MemoryMB > 0
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }() // a watch that fails leaves the other limits
		t := time.NewTicker(processWatch)
		defer t.Stop()
		ns := ""
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if why := s.passed(l, pc, mc, &ns, pid, countMemory); why != "" {
				ch <- why
				return
			}
		}
	}()
	var once sync.Once
	return ch, func() { once.Do(func() { close(quit); <-done }) }
}

// passed is one look of watchRun: which limit the run passed, or "".
func (s *Sandbox) passed(l Limits, pc *pidCap, mc *memCap, ns *string, pid int, countMemory bool) string {
	procNote := fmt.Sprintf("stopped: process limit %d (tools.terminal.max_processes)", l.Processes)
	if pc != nil && pc.refused() {
		return procNote
	}
	if mc != nil && mc.oomKills() > 0 {
		return l.memoryNote()
	}
	if *ns == "" {
		*ns = pidNamespace(pid)
		return ""
	}
	got := sampleRun(*ns, countMemory, l.DiskMB > 0)
	switch {
	case l.Processes > 0 && got.procs > l.Processes: // bwrap's own init is one of them
		return procNote
	case countMemory && got.memory > int64(l.MemoryMB)<<20:
		return l.memoryNote()
	case l.DiskMB > 0 && got.written > int64(l.DiskMB)<<20:
		return l.diskNote()
	}
	return ""
}

// joinCgroups runs argv inside the cgroups whose cgroup.procs files are
// given: a shell moves itself into each, then execs argv, so every process
// argv starts is born inside.
func joinCgroups(argv, procs []string) []string {
	if len(procs) == 0 {
		return argv
	}
	var script strings.Builder
	for i := range procs {
		fmt.Fprintf(&script, `echo $$ > "$%d" && `, i+1)
	}
	script.WriteString(`shift ` + fmt.Sprint(len(procs)) + ` && exec "$@"`)
	return append(append([]string{"/bin/sh", "-c", script.String(), "sh"}, procs...), argv...)
}
