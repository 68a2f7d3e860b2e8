package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	// The binary under test is built from cmd/cyan; importing it ties this
	// package's test cache to every package of the binary.
	_ "github.com/cyan-agent/cyan/cmd"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/testexit"
)

// binary is the cyan binary built once for all tests.
var binary string

// The tests run the real binary, each on its own data dir, port and fake
// LLM, so they run in parallel: most of their time is a daemon starting
// and answering, not CPU. -test.parallel overrides the default of 8.
//
// The binary is built without the race detector even under go test -race:
// a race-checked daemon is several times slower, and the daemon package
// runs the whole daemon in-process under the detector. CYAN_E2E_RACE=1
// builds it with -race too.
func TestMain(m *testing.M) {
	if os.Getenv(mcpServerEnv) == "1" {
		mcpServerMain()
	}
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		flag.Set("test.parallel", "8")
	}
	dir, err := os.MkdirTemp("", "cyan-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "cyan")
	args := []string{"build", "-o", binary}
	if raceEnabled && os.Getenv("CYAN_E2E_RACE") == "1" {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "github.com/cyan-agent/cyan/cmd/cyan")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building cyan:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	testexit.Exit(code)
}

// fakeLLM starts the fake LLM server; its URL is the OpenAI base URL.
func fakeLLM(t *testing.T) (*llmtest.Server, string) {
	t.Helper()
	fake := new(llmtest.Server)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return fake, srv.URL + "/v1"
}

// daemon is a running cyan serve.
type daemon struct {
	t       *testing.T
	cmd     *exec.Cmd
	dataDir string
	env     []string
	base    string // http://host:port
	stderr  *syncBuffer
	exited  chan struct{}
	err     error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listening = regexp.MustCompile(`is listening on (http://\S+)`)

// env builds the environment of a cyan process.
func env(dataDir, llmURL string, extra ...string) []string {
	e := []string{
		"HOME=" + dataDir, "PATH=" + os.Getenv("PATH"),
		"CYAN_DATA_DIR=" + dataDir, "CYAN_ADDR=127.0.0.1:0",
		"CYAN_LLM_BASE_URL=" + llmURL, "CYAN_LLM_MODEL=fake-model",
	}
	return append(e, extra...)
}

// start runs cyan serve and waits until it listens (or exits).
func start(t *testing.T, dataDir string, envv []string) *daemon {
	t.Helper()
	d := tryStart(t, dataDir, envv)
	if d.base == "" {
		t.Fatalf("cyan serve did not start: %v\n%s", d.err, d.stderr.String())
	}
	return d
}

func tryStart(t *testing.T, dataDir string, envv []string) *daemon {
	t.Helper()
	d := &daemon{t: t, dataDir: dataDir, env: envv, stderr: new(syncBuffer), exited: make(chan struct{})}
	d.cmd = exec.Command(binary, "serve")
	d.cmd.Env = envv
	pr, pw := io.Pipe()
	d.cmd.Stderr = io.MultiWriter(d.stderr, pw)
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, pr)
	}()
	go func() {
		d.err = d.cmd.Wait()
		pw.Close()
		close(d.exited)
	}()
	t.Cleanup(func() { d.kill() })
	select {
	case d.base = <-found:
	case <-d.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("cyan serve did not report its address in time:\n%s", d.stderr.String())
	}
	return d
}

func (d *daemon) kill() {
	select {
	case <-d.exited:
	default:
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
}

// stop sends sig and waits for the process to exit. The daemon bounds its
// own shutdown (shutdown_timeout, its shares tested in package daemon on
// a fake clock); stopGuard only ends a test whose daemon would never
// exit, long enough that no load can make a correct daemon miss it. It
// returns how long the exit took, for logs only.
func (d *daemon) stop(sig syscall.Signal) time.Duration {
	d.t.Helper()
	began := time.Now()
	_ = d.cmd.Process.Signal(sig)
	select {
	case <-d.exited:
		return time.Since(began)
	case <-time.After(stopGuard):
		d.t.Fatalf("cyan did not exit within %s of %v:\n%s", stopGuard, sig, d.stderr.String())
		return 0
	}
}

// stopGuard is how long stop waits for an exit: six default
// shutdown_timeouts.
const stopGuard = time.Minute

// post sends JSON and decodes the JSON answer.
func (d *daemon) post(path string, body any, hdr ...string) (int, map[string]any, error) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", d.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return do(req)
}

func (d *daemon) get(path string, hdr ...string) (int, map[string]any, error) {
	req, _ := http.NewRequest("GET", d.base+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return do(req)
}

func do(req *http.Request) (int, map[string]any, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("not JSON: %q", raw)
	}
	return resp.StatusCode, out, nil
}

// messages lists a channel through the API.
func (d *daemon) messages(t *testing.T, channel string) []map[string]any {
	t.Helper()
	code, out, err := d.get("/api/v1/messages?limit=1000&channel=" + channel)
	if err != nil || code != 200 {
		t.Fatalf("list %s: %d %v %v", channel, code, out, err)
	}
	var ms []map[string]any
	for _, m := range out["messages"].([]any) {
		ms = append(ms, m.(map[string]any))
	}
	return ms
}

// cli runs a cyan command with the given environment and stdin.
func cli(t *testing.T, envv []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	c := exec.Command(binary, args...)
	c.Env = envv
	c.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	err := c.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// addrEnv points a CLI at a running daemon.
func (d *daemon) cliEnv() []string {
	out := []string{}
	for _, e := range d.env {
		if !strings.HasPrefix(e, "CYAN_ADDR=") {
			out = append(out, e)
		}
	}
	return append(out, "CYAN_ADDR="+strings.TrimPrefix(d.base, "http://"))
}
