package tools

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// needBwrap skips without bubblewrap, unless CYAN_REQUIRE_TOOLS=1 (CI),
// where it fails.
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" {
			t.Fatal("bwrap is not installed and CYAN_REQUIRE_TOOLS=1: install bubblewrap")
		}
		t.Skip("bwrap is not installed (install bubblewrap to run the sandbox tests)")
	}
}

// q quotes s for the shell.
func q(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// mapComps rewrites each component of an absolute path.
func mapComps(p string, f func(string) string) string {
	parts := strings.Split(p, "/")
	for i, c := range parts {
		if c != "" {
			parts[i] = f(c)
		}
	}
	return strings.Join(parts, "/")
}

// trick is one way to read the file at path p (absolute); tag is unique
// to the run, for names it leaves in the working folder (a root).
type trick struct {
	name string
	cmd  func(p, tag string) string
}

// jailFixture is a machine in miniature: a home with keys, a data dir with the
// token, a folder outside the roots, and two roots — one holding .env
// files, the other the data dir — each place holding the canary.
type jailFixture struct {
	canary  string
	root    string // the working folder
	home    string
	targets map[string]string // what must stay unread, by name
	inside  string            // a file in a root that must stay readable
	sb      *Sandbox
}

func newJailFixture(t *testing.T) *jailFixture {
	t.Helper()
	raw := make([]byte, 8)
	rand.Read(raw)
	f := &jailFixture{canary: "CANARY" + hex.EncodeToString(raw)}
	base := t.TempDir()
	f.home = filepath.Join(base, "home")
	f.root = filepath.Join(base, "work")
	root2 := filepath.Join(base, "work2")
	data := filepath.Join(root2, "cyan-data")
	f.targets = map[string]string{
		"~/.ssh key":       filepath.Join(f.home, ".ssh", "id_rsa"),
		"~/.gnupg key":     filepath.Join(f.home, ".gnupg", "private-keys-v1.d", "k.key"),
		"outside file":     filepath.Join(base, "outside", "secret.txt"),
		".env in a root":   filepath.Join(f.root, ".env"),
		".env.local deep":  filepath.Join(f.root, "app", "conf", ".env.local"),
		"data dir (token)": filepath.Join(data, "api-token"),
		// Credentials by kind (Secrets), and a private key by its content.
		".aws credentials":   filepath.Join(f.root, ".aws", "credentials"),
		".netrc":             filepath.Join(f.root, ".netrc"),
		".git-credentials":   filepath.Join(f.root, "proj", ".git-credentials"),
		".bash_history":      filepath.Join(f.root, ".bash_history"),
		".envrc":             filepath.Join(f.root, "proj", ".envrc"),
		".docker/config":     filepath.Join(f.root, ".docker", "config.json"),
		".kube/config":       filepath.Join(f.root, ".kube", "config"),
		".config/gcloud":     filepath.Join(root2, ".config", "gcloud", "credentials.db"),
		"a key, by content":  filepath.Join(f.root, "deploy", "server.pem"),
		".npmrc and .pypirc": filepath.Join(f.root, "proj", ".npmrc"),
	}
	for name, p := range f.targets {
		write(t, p, f.content(name))
	}
	f.inside = filepath.Join(f.root, ".hidden", "keep", "ok.txt")
	write(t, f.inside, "INSIDE-OK\n")
	write(t, filepath.Join(root2, "README"), "work2\n")
	jail := NewJail(JailOptions{Roots: []string{f.root, root2}, DataDir: data, Home: f.home})
	if jail.Err() != nil {
		t.Fatalf("no sandbox: %v", jail.Err())
	}
	f.sb = &Sandbox{Jail: jail, Timeout: 20 * time.Second, Getenv: func(k string) string {
		if k == "HOME" {
			return f.home
		}
		return os.Getenv(k)
	}}
	return f
}

// content is what a place of the fixture holds: its canary, after a
// private key's header for the key found by content.
func (f *jailFixture) content(name string) string {
	if name == "a key, by content" {
		return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + f.canary + "-" + name + "\n"
	}
	return f.canary + "-" + name + "\n"
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (f *jailFixture) run(t *testing.T, cmd string) string {
	t.Helper()
	res, err := f.sb.Run(context.Background(), []string{"/bin/sh", "-c", cmd}, f.root, nil)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return res.Output
}

// tricks spell "read this file" in every way a shell offers.
func tricks(root string) []trick {
	octal := func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, `\%03o`, c)
		}
		return b.String()
	}
	rev := func(s string) string {
		r := []rune(s)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r)
	}
	rot13 := func(s string) string {
		return strings.Map(func(c rune) rune {
			switch {
			case c >= 'a' && c <= 'z':
				return 'a' + (c-'a'+13)%26
			case c >= 'A' && c <= 'Z':
				return 'A' + (c-'A'+13)%26
			}
			return c
		}, s)
	}
	dir, base := filepath.Dir, filepath.Base
	return []trick{
		{"plain", func(p, _ string) string { return "cat " + p }},
		{"double quotes", func(p, _ string) string { return `cat "` + p + `"` }},
		{"single quotes", func(p, _ string) string { return "cat " + q(p) }},
		{"empty quotes inside names", func(p, _ string) string {
			return "cat " + mapComps(p, func(c string) string { return c[:1] + `""` + c[1:] })
		}},
		{"empty single quotes inside names", func(p, _ string) string {
			return "cat " + mapComps(p, func(c string) string { return c[:1] + `''` + c[1:] })
		}},
		{"backslash before every letter", func(p, _ string) string {
			return "cat " + mapComps(p, func(c string) string {
				var b strings.Builder
				for _, r := range c {
					b.WriteString(`\` + string(r))
				}
				return b.String()
			})
		}},
		{"? glob on the last letter", func(p, _ string) string {
			return "cat " + mapComps(p, func(c string) string { return c[:len(c)-1] + "?" })
		}},
		{"* glob", func(p, _ string) string {
			return "cat " + mapComps(p, func(c string) string { return c[:(len(c)+1)/2] + "*" })
		}},
		{"[] glob", func(p, _ string) string {
			return "cat " + mapComps(p, func(c string) string {
				if c[0] == '.' && len(c) > 1 { // a leading dot is matched only by itself
					return c[:1] + "[" + c[1:2] + "]" + c[2:]
				}
				return "[" + c[:1] + "]" + c[1:]
			})
		}},
		{"/./ between names", func(p, _ string) string { return "cat " + strings.ReplaceAll(p, "/", "/./") }},
		{"// between names", func(p, _ string) string { return "cat " + strings.ReplaceAll(p, "/", "//") }},
		{"name/../name", func(p, _ string) string {
			return "cat " + dir(dir(p)) + "/" + base(dir(p)) + "/../" + base(dir(p)) + "/" + base(p)
		}},
		{"relative .. from the working folder", func(p, _ string) string {
			rel, _ := filepath.Rel(root, p)
			return "cat " + rel
		}},
		{"many ../ from the working folder", func(p, _ string) string { return "cat " + strings.Repeat("../", 12) + p[1:] }},
		{"cd step by step", func(p, _ string) string {
			var b strings.Builder
			b.WriteString("cd /")
			for _, c := range strings.Split(dir(p), "/")[1:] {
				b.WriteString(" && cd " + q(c))
			}
			return b.String() + " && cat " + q(base(p))
		}},
		{"variable", func(p, _ string) string { return "X=" + q(p) + `; cat "$X"` }},
		{"variable halves", func(p, _ string) string {
			h := len(p) / 2
			return "A=" + q(p[:h]) + "; B=" + q(p[h:]) + `; cat "$A$B"`
		}},
		{"${X%suffix}", func(p, _ string) string { return "X=" + q(p+"ZZZ") + `; cat "${X%ZZZ}"` }},
		{"exported variable in a child shell", func(p, _ string) string { return "export X=" + q(p) + `; sh -c 'cat "$X"'` }},
		{"$(echo)", func(p, _ string) string { return "cat $(echo " + q(p) + ")" }},
		{"backticks", func(p, _ string) string { return "cat `echo " + q(p) + "`" }},
		{"printf octal", func(p, _ string) string { return `cat "$(printf '` + octal(p) + `')"` }},
		{"base64 -d", func(p, _ string) string {
			return `cat "$(echo ` + base64.StdEncoding.EncodeToString([]byte(p)) + ` | base64 -d)"`
		}},
		{"rev", func(p, _ string) string { return `cat "$(echo ` + q(rev(p)) + ` | rev)"` }},
		{"rot13 with tr", func(p, _ string) string {
			return `cat "$(echo ` + q(rot13(p)) + ` | tr 'A-Za-z' 'N-ZA-Mn-za-m')"`
		}},
		{"xxd -r -p", func(p, _ string) string { return `cat "$(echo ` + hex.EncodeToString([]byte(p)) + ` | xxd -r -p)"` }},
		{"here-doc script", func(p, _ string) string { return "sh <<'EOF'\ncat " + q(p) + "\nEOF" }},
		{"here-doc into xargs", func(p, _ string) string { return "xargs cat <<'EOF'\n" + p + "\nEOF" }},
		{"bash here-string", func(p, _ string) string {
			return `bash -c 'cat <<< "$(cat ` + strings.ReplaceAll(q(p), "'", `'\''`) + `)"'`
		}},
		{"bash brace expansion", func(p, _ string) string { return "bash -c " + q("cat {"+p+",/nonexistent} 2>/dev/null") }},
		{"eval", func(p, _ string) string { return `eval "cat ` + q(p) + `"` }},
		{"IFS word splitting", func(p, _ string) string { return "IFS=@; c=" + q("cat@"+p) + "; $c" }},
		{"echo | xargs", func(p, _ string) string { return "echo " + q(p) + " | xargs cat" }},
		{"symlink to the file", func(p, tag string) string { return "ln -sf " + q(p) + " l-" + tag + " && cat l-" + tag }},
		{"symlink to its folder", func(p, tag string) string {
			return "ln -sfn " + q(dir(p)) + " d-" + tag + " && cat d-" + tag + "/" + q(base(p))
		}},
		{"hard link", func(p, tag string) string { return "ln " + q(p) + " h-" + tag + " && cat h-" + tag }},
		{"cp", func(p, tag string) string { return "cp " + q(p) + " c-" + tag + " && cat c-" + tag }},
		{"cp -r of the folder", func(p, tag string) string {
			return "cp -r " + q(dir(p)) + " r-" + tag + " && cat r-" + tag + "/" + q(base(p))
		}},
		{"mv", func(p, tag string) string { return "mv " + q(p) + " m-" + tag + " && cat m-" + tag }},
		{"tar of the folder", func(p, _ string) string { return "tar -C " + q(dir(p)) + " -cf - " + q(base(p)) + " | tar -xOf -" }},
		{"gzip round trip", func(p, _ string) string { return "gzip -c " + q(p) + " | gunzip" }},
		{"base64 round trip", func(p, _ string) string { return "base64 " + q(p) + " | base64 -d" }},
		{"< redirect", func(p, _ string) string { return "cat < " + q(p) }},
		{"exec fd 3", func(p, _ string) string { return "exec 3< " + q(p) + "; cat <&3" }},
		{"head", func(p, _ string) string { return "head -c 4096 " + q(p) }},
		{"dd", func(p, _ string) string { return "dd if=" + q(p) + " status=none" }},
		{"sed", func(p, _ string) string { return "sed -n p " + q(p) }},
		{"awk", func(p, _ string) string { return "awk 1 " + q(p) }},
		{"grep -r the folder", func(p, _ string) string { return "grep -r . " + q(dir(p)) }},
		{"find -exec cat", func(p, _ string) string { return "find " + q(dir(p)) + " -type f -exec cat {} +" }},
		{"find / by name", func(p, _ string) string {
			return "find / -path /usr -prune -o -path /proc -prune -o -name " + q(base(p)) + " -type f -exec cat {} + 2>/dev/null"
		}},
		{"python3", func(p, _ string) string {
			return "/usr/bin/python3 -c " + q("print(open("+fmt.Sprintf("%q", p)+").read())")
		}},
		{"perl", func(p, _ string) string { return "perl -ne print " + q(p) }},
		{"bash -c", func(p, _ string) string { return "bash -c " + q("cat "+q(p)) }},
		{"git diff --no-index", func(p, _ string) string { return "git diff --no-index /dev/null " + q(p) + "; true" }},
		{"realpath", func(p, _ string) string { return `cat "$(realpath -m ` + q(p) + `)"` }},
		{"/proc/self/root", func(p, _ string) string { return "cat /proc/self/root" + q(p) }},
		{"/proc/1/root", func(p, _ string) string { return "cat /proc/1/root" + q(p) }},
		{"/proc/self/cwd and ..", func(p, _ string) string {
			rel, _ := filepath.Rel(root, p)
			return "cat /proc/self/cwd/" + q(rel)
		}},
		{"/dev/fd of an opened file", func(p, _ string) string { return "exec 4< " + q(p) + "; cat /dev/fd/4" }},
		{"/* globs for every folder", func(p, _ string) string {
			return "cat " + mapComps(dir(p), func(c string) string {
				if c[0] == '.' {
					return ".[!.]*" // a glob matches a leading dot only when it says so
				}
				return "*"
			}) + "/" + q(base(p))
		}},
	}
}

func TestSandboxShellTricks(t *testing.T) {
	needBwrap(t)
	// The tricks are about paths, not the process limit (TestSandboxLimits
	// and TestPidCapRefusesForksPastItsMax): the sandbox counts its
	// processes ten times less often here, where each count would read
	// all of /proc, for each of 80 sandboxes, and cost half the test's
	// CPU. The limit still holds, and is still watched.
	defer func(d time.Duration) { processWatch = d }(processWatch)
	processWatch = 200 * time.Millisecond
	f := newJailFixture(t)
	ts := tricks(f.root)
	if len(ts) < 50 {
		t.Fatalf("only %d tricks", len(ts))
	}
	type row struct {
		name    string
		blocked int
		inside  bool
	}
	var (
		mu   sync.Mutex
		rows []row
	)
	start := time.Now()
	t.Run("tricks", func(t *testing.T) {
		for i, tr := range ts {
			t.Run(tr.name, func(t *testing.T) {
				t.Parallel()
				r := row{name: tr.name}
				// One run: first the same command on a file inside the
				// roots (it works), then every place outside, each in a
				// subshell of its own (one sandbox start a trick, not two).
				in := filepath.Join(f.root, ".hidden", fmt.Sprintf("keep%d", i), "ok.txt")
				write(t, in, "INSIDE-OK\n")
				var script strings.Builder
				fmt.Fprintf(&script, "(\n%s\n) 2>&1\n", tr.cmd(in, fmt.Sprintf("i%d", i)))
				names := slices.Sorted(maps.Keys(f.targets))
				for k, name := range names {
					fmt.Fprintf(&script, "(\n%s\n) 2>&1\n", tr.cmd(f.targets[name], fmt.Sprintf("o%d-%d", i, k)))
				}
				out := f.run(t, script.String())
				for _, name := range names {
					if strings.Contains(out, f.canary+"-"+name) {
						t.Errorf("%s read %s:\n%s", tr.name, name, out)
						continue
					}
					r.blocked++
				}
				if strings.Contains(out, f.canary) && !t.Failed() {
					t.Errorf("%s read a canary:\n%s", tr.name, out)
				}
				r.inside = strings.Contains(out, "INSIDE-OK")
				if !r.inside {
					t.Errorf("%s does not work inside the roots:\n%s\n%s", tr.name, tr.cmd(in, "i"), out)
				}
				mu.Lock()
				rows = append(rows, r)
				mu.Unlock()
			})
		}
	})
	for name, p := range f.targets {
		if b, err := os.ReadFile(p); err != nil || string(b) != f.content(name) {
			t.Errorf("%s was changed or removed: %q %v", name, b, err)
		}
	}
	t.Logf("%d tricks × %d places outside (all blocked: %v) + inside, in %s", len(ts), len(f.targets), !t.Failed(), time.Since(start).Round(time.Millisecond))
}

// TestSandboxEscapes tries what is not a path: the daemon's process, the
// network, the kernel, new namespaces, devices.
func TestSandboxEscapes(t *testing.T) {
	needBwrap(t)
	f := newJailFixture(t)
	t.Setenv("CYAN_TEST_SECRET", f.canary)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, f.canary) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	pid := fmt.Sprint(os.Getpid())
	key := f.targets["~/.ssh key"]
	ok := " && echo " + f.canary
	for _, tc := range []struct{ name, cmd string }{
		{"the daemon's environment", "cat /proc/" + pid + "/environ"},
		{"the daemon's root", "cat /proc/" + pid + "/root" + key},
		{"signal the daemon", "kill -0 " + pid + ok},
		{"the API on loopback with curl", "curl -s --max-time 2 http://127.0.0.1:" + port + "/"},
		{"the API with bash /dev/tcp", "bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + port + " && printf \"GET / HTTP/1.0\\r\\n\\r\\n\" >&3 && cat <&3'"},
		{"write a sysctl", "(: > /proc/sys/kernel/printk_ratelimit)" + ok},
		{"the sysrq trigger", "(: > /proc/sysrq-trigger)" + ok},
		{"a new user namespace", "unshare -Urm sh -c 'mount --bind / /mnt && cat /mnt" + key + "'"},
		{"unmount a cover", "umount " + q(f.targets[".env in a root"]) + ok},
		{"mount", "mount -t tmpfs x /tmp" + ok},
		{"nsenter the host", "nsenter -t 1 -m -- cat " + q(key)},
		{"chroot /proc/1/root", "chroot /proc/1/root cat " + q(key)},
		{"mknod the disk", "mknod disk b 254 0" + ok},
		{"write outside", "echo pwned > " + q(filepath.Join(f.home, "pwned")) + ok},
		{"delete a key", "rm -f " + q(key)},
		{"truncate the token", ": > " + q(f.targets["data dir (token)"])},
		{"chmod the key", "chmod 000 " + q(key)},
		{"list the data dir", "ls -a " + q(filepath.Dir(f.targets["data dir (token)"])) + " | grep api-token && echo " + f.canary},
		{"plant .env as a link to a key, then read it", "rm -f .env; ln -s " + q(key) + " .env; cat .env"},
	} {
		out := f.run(t, tc.cmd)
		if strings.Contains(out, f.canary) {
			t.Errorf("%s: %s\n%s", tc.name, tc.cmd, out)
		}
	}
	// The planted link is there for the next command, which reads nothing.
	if out := f.run(t, "cat .env"); strings.Contains(out, f.canary) {
		t.Errorf("the planted .env read the key: %s", out)
	}
	for name, p := range f.targets {
		if name == ".env in a root" {
			continue // replaced by the plant above, inside the root
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != f.content(name) {
			t.Errorf("%s was changed: %q %v", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.home, "pwned")); err == nil {
		t.Error("a file was written outside the roots")
	}
	// What should work does: writing in the roots, /tmp, pipes, the shell's
	// own processes.
	out := f.run(t, "echo made > made.txt && cat made.txt && echo t > /tmp/t && cat /tmp/t && ps -e | wc -l && echo $HOME")
	if !strings.Contains(out, "made") || !strings.Contains(out, "t\n") {
		t.Fatalf("ordinary work fails: %s", out)
	}
	if b, err := os.ReadFile(filepath.Join(f.root, "made.txt")); err != nil || string(b) != "made\n" {
		t.Fatalf("the root is not writable: %q %v", b, err)
	}
}

func TestSandboxKillsEverythingAtTheTimeout(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	f := newJailFixture(t)
	f.sb.Timeout = 500 * time.Millisecond
	marker := filepath.Join(f.root, "late")
	res, err := f.sb.Run(context.Background(), []string{"/bin/sh", "-c", "(setsid sh -c 'sleep 2; touch " + marker + "' &) ; sleep 30"}, f.root, nil)
	if err != nil || !res.TimedOut {
		t.Fatalf("%+v %v", res, err)
	}
	// The command's PID namespace died with it: nothing it left behind,
	// even in a session of its own, still runs.
	for i := 0; leftBehind(marker); i++ {
		if i == 500 {
			t.Fatal("a process the command left behind runs on")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// leftBehind reports whether a process whose command line names marker
// still runs (zombies aside).
func leftBehind(marker string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmd), marker) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
			return true
		}
	}
	return false
}

func TestJailWithoutBwrap(t *testing.T) {
	j := NewJail(JailOptions{Roots: []string{t.TempDir()}, Bwrap: filepath.Join(t.TempDir(), "no-bwrap")})
	if j.Err() == nil {
		t.Fatal("a missing bwrap confines")
	}
	sb := &Sandbox{Jail: j}
	_, err := sb.Run(context.Background(), []string{"/bin/true"}, "/", nil)
	if err == nil || !strings.Contains(err.Error(), "tools.terminal.sandbox") {
		t.Fatalf("err = %v; want one that says what to do", err)
	}
	off := NewJail(JailOptions{Mode: ConfineOff})
	if off.Err() != nil || !off.Off() || !strings.Contains(off.String(), "unconfined") {
		t.Fatalf("off: %v %s", off.Err(), off)
	}
}

// BenchmarkCommand is the cost of one terminal command, unconfined and in
// the jail (whose cost is bwrap's namespaces plus the walk for secrets).
func BenchmarkCommand(b *testing.B) {
	root := b.TempDir()
	for _, tc := range []struct {
		name string
		jail *Jail
	}{{"unconfined", nil}, {"bwrap", NewJail(JailOptions{Roots: []string{root}})}} {
		b.Run(tc.name, func(b *testing.B) {
			if tc.jail != nil && tc.jail.Err() != nil {
				b.Skip(tc.jail.Err())
			}
			sb := &Sandbox{Jail: tc.jail}
			for b.Loop() {
				if res, err := sb.Run(context.Background(), []string{"/bin/sh", "-c", "echo ok"}, root, nil); err != nil || res.Exit != 0 {
					b.Fatal(res, err)
				}
			}
		})
	}
}

// BenchmarkWrapLargeRoot is the walk for secrets before each command, over
// a root as large as the Go distribution's source.
func BenchmarkWrapLargeRoot(b *testing.B) {
	root := filepath.Join(runtime.GOROOT(), "src")
	files := 0
	filepath.WalkDir(root, func(string, fs.DirEntry, error) error { files++; return nil })
	j := NewJail(JailOptions{Roots: []string{root}})
	if j.Err() != nil {
		b.Skip(j.Err())
	}
	for b.Loop() {
		if _, err := j.Wrap([]string{"true"}, root, nil, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(files), "entries")
}
