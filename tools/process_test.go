package tools

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/packets"
)

// gone reports whether no process of the group still runs (zombies
// waiting for the system to reap them do not run), waiting briefly for
// the kill to land.
func gone(pgid int) bool {
	for range 200 {
		if !GroupAlive(pgid) || !running(pgid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// running scans /proc for a process of group pgid that is not a zombie.
func running(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return GroupAlive(pgid)
	}
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			return true
		}
	}
	return false
}

func TestTerminalKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	sb := &Sandbox{Timeout: 300 * time.Millisecond}
	for _, cmd := range []string{"sleep 1000", "(sleep 1000 &)", "sleep 1000 & sleep 1000 & wait", "sh -c 'sleep 1000' & echo started; wait"} {
		began := time.Now()
		res, err := sb.Run(context.Background(), []string{"/bin/sh", "-c", cmd}, t.TempDir(), nil)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		// A run that waited on the group's sleeps would take 1000 s; the
		// minute leaves any load room (the timeout is 300 ms).
		if took := time.Since(began); took > time.Minute {
			t.Errorf("%s: took %s: the run waited on the group's sleeps", cmd, took)
		}
		if !gone(res.PGID) {
			t.Errorf("%s: a process of group %d survived", cmd, res.PGID)
		}
		if cmd == "sleep 1000" && (!res.TimedOut || res.Exit != -1 || !strings.Contains(res.Text(), "timeout")) {
			t.Errorf("%s: %+v", cmd, res)
		}
	}
}

func TestTerminalCapsOutput(t *testing.T) {
	t.Parallel()
	sb := &Sandbox{Timeout: 10 * time.Second, MaxOutput: 1024}
	res, err := sb.Run(context.Background(), []string{"yes"}, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Output) > 1024+100 || res.Cut <= 0 || !strings.Contains(res.Note, "more than") || !gone(res.PGID) {
		t.Fatalf("yes: %d bytes kept, %d cut, note %q", len(res.Output), res.Cut, res.Note)
	}
	sb.MaxOutput = 200
	res, _ = sb.Run(context.Background(), []string{"seq", "1", "100000"}, t.TempDir(), nil)
	if !strings.HasPrefix(res.Output, "1\n2\n3\n") || !strings.HasSuffix(res.Output, "99999\n100000\n") || !strings.Contains(res.Output, "bytes cut") || res.Exit != 0 {
		t.Fatalf("head and tail: %q", res.Output)
	}
}

func TestTerminalEnvironmentHasNoSecrets(t *testing.T) {
	env := map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": "/home/owner", "LANG": "C.UTF-8", "EDITOR": "vi",
		"OPENAI_API_KEY": "sk-secret1", "CYAN_LLM_API_KEY": "sk-secret2", "GITHUB_TOKEN": "ghp-secret3",
		"AWS_SECRET_ACCESS_KEY": "secret4", "DB_PASSWORD": "secret5", "CYAN_DATA_DIR": "/data",
	}
	sb := &Sandbox{Env: []string{"EDITOR", "OPENAI_API_KEY", "GITHUB_TOKEN", "CYAN_DATA_DIR"}, Getenv: func(k string) string { return env[k] }}
	res, err := sb.Run(context.Background(), []string{"env"}, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"secret", "CYAN_", "KEY", "TOKEN"} {
		if strings.Contains(res.Output, s) {
			t.Errorf("env shows %q:\n%s", s, res.Output)
		}
	}
	if !strings.Contains(res.Output, "EDITOR=vi") || !strings.Contains(res.Output, "HOME=/home/owner") {
		t.Errorf("passed variables missing:\n%s", res.Output)
	}
}

func TestTerminalTool(t *testing.T) {
	f := newFixture(t)
	b := Builtins{Paths: f.paths, Sandbox: &Sandbox{Timeout: time.Minute}}
	r := New(Options{})
	for _, tl := range b.Tools() {
		must(t, r.Register(tl))
	}
	run := func(cmd string) Outcome {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return r.call(context.Background(), packets.Caller{Owner: true}, "terminal", args, true)
	}
	if o := run("pwd; echo hi"); o.Error != "" || !strings.Contains(o.Result.OutputText, f.root) || !strings.Contains(o.Result.OutputText, "[exit 0]") {
		t.Fatalf("pwd: %+v", o)
	}
	for _, cmd := range []string{"cat " + f.data + "/api-token", "cat ~/.ssh/id_rsa", "cat .env", "cat /proc/self/root/etc/passwd", "cat /proc/$PPID/environ", "echo 'unbalanced"} {
		if o := run(cmd); !strings.Contains(o.Error, "denied") {
			t.Errorf("%s: %+v", cmd, o)
		}
	}
	// read_file and write_file through the registry.
	call := func(tool string, args any) Outcome {
		b, _ := json.Marshal(args)
		return r.call(context.Background(), packets.Caller{Owner: true}, tool, b, true)
	}
	if o := call("read_file", map[string]string{"path": "%[" + f.root + "/a.txt] Line 2 ~ Line 3"}); o.Result.OutputText != "world\nthird\n" {
		t.Fatalf("read range: %+v", o)
	}
	if o := call("read_file", map[string]any{"path": "a.txt", "start_line": 3}); o.Result.OutputText != "third\n" {
		t.Fatalf("read start_line: %+v", o)
	}
	if o := call("read_file", map[string]any{"path": "a.txt", "bogus": 1}); !strings.Contains(o.Error, "bad arguments") {
		t.Fatalf("unknown argument: %+v", o)
	}
	o := call("write_file", map[string]any{"path": "%[out/n.txt]", "content": "新"})
	if o.Error != "" || len(o.Result.OutputFile) != 1 || !strings.HasSuffix(o.Result.OutputFile[0], "/out/n.txt") {
		t.Fatalf("write: %+v", o)
	}
	var back packets.Result
	if err := json.Unmarshal([]byte(o.Text()), &back); err != nil || back.OutputFile[0] != o.Result.OutputFile[0] {
		t.Fatalf("a result with files reads as JSON: %q", o.Text())
	}
	if o := call("write_file", map[string]any{"path": "../x", "content": "x"}); !strings.Contains(o.Error, "denied") {
		t.Fatalf("write escape: %+v", o)
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"ls -la", []string{"ls -la"}},
		{"a; b && c || d | e & f\ng", []string{"a", "b", "c", "d", "e", "f", "g"}},
		{"(sleep 1000 &)", []string{"sleep 1000"}},
		{"echo $(rm -rf /)", []string{"echo $(rm -rf /)", "rm -rf /"}},
		{`echo "$(curl x; id)"`, []string{`echo "$(curl x; id)"`, "curl x", "id"}},
		{"echo `whoami`", []string{"echo `whoami`", "whoami"}},
		{"echo 'a; b' \"c && d\"", []string{"echo 'a; b' \"c && d\""}},
		{"echo a\\;b", []string{"echo a\\;b"}},
		{"cmd > out 2>&1", []string{"cmd > out 2>&1"}},
		{"{ a; b; }", []string{"a", "b"}},
		{"diff <(ls a) <(ls b)", []string{"diff <(ls a) <(ls b)", "ls a", "ls b"}},
		{"echo $(echo $(id))", []string{"echo $(echo $(id))", "echo $(id)", "id"}},
	}
	for _, tt := range tests {
		got, err := SplitCommand(tt.in)
		if err != nil || strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"echo 'x", `echo "x`, "echo $(x", "a)", "(a", "echo `x", strings.Repeat("$(", 40) + strings.Repeat(")", 40)} {
		if _, err := SplitCommand(bad); err == nil {
			t.Errorf("SplitCommand(%q) accepted", bad)
		}
	}
}

// With no folder open (no tools.roots) the file and terminal tools are not
// offered at all: nothing is offered that could only fail.
func TestNoRootsNoFileTools(t *testing.T) {
	p, err := NewPaths(nil, t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range (Builtins{Paths: p, Sandbox: &Sandbox{}, Scripts: nil}).Tools() {
		names = append(names, tl.Name)
	}
	if len(names) != 0 {
		t.Fatalf("offered without roots: %v", names)
	}
	f := newFixture(t)
	names = nil
	for _, tl := range (Builtins{Paths: f.paths, Sandbox: &Sandbox{}}).Tools() {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "read_file,write_file,terminal" {
		t.Fatalf("with roots: %v", names)
	}
}
