//go:build linux

package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/tools"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: what the command reads from tty is
// what the test writes to master.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// toolDaemon serves the real API with a tool that writes a canary, which
// the default owner rules say to confirm.
func toolDaemon(t *testing.T) (env func(string) string, canary string, reg *tools.Registry) {
	t.Helper()
	_, client := llmtest.Start(t)
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, _ := persona.Default()
	mv, err := mainvirtual.New(mainvirtual.Options{Store: st, LLM: client, Persona: func() *persona.Persona { return p }, Agent: config.Defaults().Agent})
	if err != nil {
		t.Fatal(err)
	}
	canary = filepath.Join(t.TempDir(), "canary")
	reg = tools.New(tools.Options{})
	err = reg.Register(packets.Tool{ToolSpec: packets.ToolSpec{Name: "touch", Description: "make the canary", Kind: packets.ToolProcess, Effects: []string{packets.EffectWrite}},
		Run: func(context.Context, *packets.ToolCall) (packets.Result, error) {
			return packets.Result{OutputText: "made"}, os.WriteFile(canary, []byte("x"), 0o600)
		}})
	if err != nil {
		t.Fatal(err)
	}
	reg.EnableApprovals(tools.ApprovalOptions{Store: st})
	s, err := api.New(api.Options{Agent: mv, Store: st, Tools: reg, CheckHost: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	vars := map[string]string{"CYAN_ADDR": strings.TrimPrefix(srv.URL, "http://"), "CYAN_DATA_DIR": t.TempDir()}
	return func(k string) string { return vars[k] }, canary, reg
}

func TestToolRunAsksOnATerminal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string
		runs   bool
	}{
		{"yes", "y\n", true},
		{"no", "n\n", false},
		{"just enter", "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, canary, reg := toolDaemon(t)
			master, tty := openPTY(t)
			if _, err := master.WriteString(tc.answer); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			code := Main([]string{"tool", "run", "--json", "touch", `{"why": "test"}`}, IO{Stdin: tty, Stdout: &out, Stderr: &errb, Env: env})
			if !strings.Contains(errb.String(), `touch {"why":"test"}`) || !strings.Contains(errb.String(), "[y/N]") {
				t.Fatalf("the call was not shown before asking: %q", errb.String())
			}
			_, err := os.Stat(canary)
			if ran := err == nil; ran != tc.runs {
				t.Fatalf("ran = %v, want %v (exit %d, %s %s)", ran, tc.runs, code, out.String(), errb.String())
			}
			if tc.runs && (code != 0 || !strings.Contains(out.String(), `"allowed": true`)) {
				t.Fatalf("exit %d: %s", code, out.String())
			}
			if !tc.runs && code == 0 {
				t.Fatal("a refused call exits 0")
			}
			if p, _ := reg.Approvals().Pending(); len(p) != 0 {
				t.Fatalf("left pending: %v", p)
			}
		})
	}
}

func TestToolRunWithoutATerminalOnlyParks(t *testing.T) {
	env, canary, reg := toolDaemon(t)
	var out, errb bytes.Buffer
	// "y" on a pipe is not a person at a terminal.
	code := Main([]string{"tool", "run", "--json", "touch", `{}`}, IO{Stdin: strings.NewReader("y\n"), Stdout: &out, Stderr: &errb, Env: env})
	if code == 0 || !strings.Contains(errb.String(), "cyan approvals allow") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the call ran without approval")
	}
	var parked struct{ Approval string }
	if err := json.Unmarshal(out.Bytes(), &parked); err != nil || parked.Approval == "" {
		t.Fatalf("no approval id in %s", out.String())
	}
	if p, _ := reg.Approvals().Pending(); len(p) != 1 || p[0].ID != parked.Approval {
		t.Fatalf("pending: %v", p)
	}
}

// TestToolRunExitStatus: cyan tool run prints a tool's output and exits 0
// only when the call ran and worked; a refused call, one still waiting for
// approval and a failing tool exit 1 and say why.
func TestToolRunExitStatus(t *testing.T) {
	env, _, reg := toolDaemon(t)
	for _, tl := range []packets.Tool{
		{ToolSpec: packets.ToolSpec{Name: "echo", Description: "say it back", Kind: packets.ToolProcess, Effects: []string{}},
			Run: func(_ context.Context, c *packets.ToolCall) (packets.Result, error) {
				return packets.Result{OutputText: "echo: " + string(c.Args)}, nil
			}},
		{ToolSpec: packets.ToolSpec{Name: "boom", Description: "always fails", Kind: packets.ToolProcess, Effects: []string{}},
			Run: func(context.Context, *packets.ToolCall) (packets.Result, error) {
				return packets.Result{}, fmt.Errorf("the disk is on fire")
			}},
	} {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"works", []string{"tool", "run", "echo", `{"a":1}`}, 0, `echo: {"a":1}`, ""},
		{"works, JSON", []string{"tool", "run", "--json", "echo", `{"a":1}`}, 0, `"decision": "allow"`, ""},
		{"fails", []string{"tool", "run", "boom"}, 1, "", "cyan tool run: boom failed: the disk is on fire"},
		{"fails, JSON", []string{"tool", "run", "boom", "--json"}, 1, `"error": "the disk is on fire"`, "boom failed"},
		{"refused", []string{"tool", "run", "--as", "id:qq:999", "--kind", "group", "touch"}, 1, "", "touch was refused by the rule"},
		{"waits", []string{"tool", "run", "touch"}, 1, "", "cyan approvals allow"},
		{"unknown tool", []string{"tool", "run", "nope"}, 1, "", "nope"},
		{"check says, exits 0", []string{"tool", "check", "--as", "id:qq:999", "--kind", "group", "touch"}, 0, "deny (rule", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(tc.args, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Env: env})
			if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), tc.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out.String(), errb.String())
			}
		})
	}
}
