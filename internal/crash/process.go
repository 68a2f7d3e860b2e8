package crash

import (
	"bufio"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// process is one run of cyan serve.
type process struct {
	cmd       *exec.Cmd
	log       *tail
	exited    chan struct{}
	listening chan string
	base      string // http://host:port once listening
	killed    atomic.Bool
}

var listeningRe = regexp.MustCompile(`is listening on (http://\S+)`)

func startProcess(binary string, env []string) (*process, error) {
	p := &process{log: &tail{max: 64 << 10}, exited: make(chan struct{}), listening: make(chan string, 1)}
	p.cmd = exec.Command(binary, "serve")
	p.cmd.Env = env
	pr, pw := io.Pipe()
	p.cmd.Stderr = io.MultiWriter(p.log, pw)
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
				p.listening <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		_ = p.cmd.Wait()
		_ = pw.Close()
		close(p.exited)
	}()
	return p, nil
}

// waitListening waits until the daemon listens (true), exits, or limit
// passes.
func (p *process) waitListening(limit time.Duration) bool {
	select {
	case p.base = <-p.listening:
		return true
	case <-p.exited:
	case <-time.After(limit):
	}
	return false
}

// exitedOnItsOwn reports whether the process ended without being killed.
func (p *process) exitedOnItsOwn() bool {
	select {
	case <-p.exited:
		return !p.killed.Load()
	default:
		return false
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *process) kill() {
	p.killed.Store(true)
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// repairs counts the leftovers of an interrupted start this run removed.
func (p *process) repairs() int {
	return strings.Count(p.log.last(p.log.max), "left by an interrupted run")
}

// terminate sends SIGTERM and waits up to limit; it reports how long the
// exit took and whether it came in time (else the process is killed).
func (p *process) terminate(limit time.Duration) (time.Duration, bool) {
	began := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return time.Since(began), true
	case <-time.After(limit):
		p.kill()
		return time.Since(began), false
	}
}

func (p *process) logTail(n int) string { return p.log.last(n) }

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(b), nil
}

func (t *tail) last(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b[max(0, len(t.b)-n):])
}
