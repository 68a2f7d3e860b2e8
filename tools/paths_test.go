package tools

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// fixture lays out a root with traps: symlinks out of it, a FIFO, the data
// dir inside it, .env files and private key folders.
type fixture struct {
	base, root, data, home, outside string
	paths                           *Paths
}

const secret = "TOP-SECRET-CONTENT"

func newFixture(t testing.TB) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{base: base, root: filepath.Join(base, "root"), home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside.txt")}
	f.data = filepath.Join(f.root, "cyan-data")
	for _, d := range []string{f.root, f.root + "/sub", f.data + "/db", f.home + "/.ssh", f.root + "/.ssh", f.root + "/dir with space"} {
		must(t, os.MkdirAll(d, 0o755))
	}
	write := func(p, s string) { must(t, os.WriteFile(p, []byte(s), 0o644)) }
	write(f.root+"/a.txt", "hello\nworld\nthird\n")
	write(f.root+"/sub/b.txt", "b")
	write(f.root+"/名字.txt", "名")
	write(f.root+"/dir with space/x.txt", "x")
	write(f.root+"/.env", secret)
	write(f.root+"/sub/.env.local", secret)
	write(f.root+"/.ssh/id_rsa", secret)
	write(f.home+"/.ssh/id_rsa", secret)
	write(f.data+"/api-token", secret)
	write(f.data+"/LOCK", secret)
	write(f.data+"/db/000001.vlog", secret)
	write(f.outside, secret)
	link := func(target, name string) { must(t, os.Symlink(target, filepath.Join(f.root, name))) }
	link("a.txt", "link_in")
	link(f.outside, "link_out")
	link(f.base, "dirlink_out")
	link("/etc", "mid")
	link("/dev/null", "dev_link")
	link(f.home+"/.ssh", "sshlink")
	link(f.data, "data_link")
	link("/proc/self/root", "proc_link")
	link("../outside.txt", "rel_out")
	link("sub/../../outside.txt", "rel_out2")
	must(t, syscall.Mkfifo(f.root+"/fifo", 0o644))
	p, err := NewPaths([]string{f.root}, f.data, f.home)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	f.paths = p
	return f
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// escapes are paths that must never be opened, relative to the root; each
// is also tried as the absolute path under the root.
var escapes = []string{
	"../outside.txt", "../../etc/passwd", "sub/../../outside.txt", "sub/../a.txt", "..", "../",
	"./../outside.txt", "sub/./../../outside.txt", "a.txt/../../outside.txt",
	"link_out", "dirlink_out/outside.txt", "mid/passwd", "mid/shadow", "rel_out", "rel_out2",
	"fifo", "dev_link", "sshlink/id_rsa", ".ssh/id_rsa", ".env", "sub/.env.local",
	"cyan-data/api-token", "cyan-data/LOCK", "cyan-data/db/000001.vlog", "cyan-data",
	"data_link/api-token", "data_link/db/000001.vlog", "proc_link/etc/passwd", "proc_link",
	"~/.ssh/id_rsa", "~", "~root/.bashrc",
	"%2e%2e/outside.txt", "..%2Foutside.txt", "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd", "sub%2F..%2F..%2Foutside.txt",
	"a.txt\x00.png", "\x00", "sub\\..\\..\\outside.txt", "..\\outside.txt", "a\nb", "a\tb", "\x7f",
	"", strings.Repeat("a/", 3000),
}

// absolutes are paths outside every root (or always denied), as given.
var absolutes = []string{
	"/etc/passwd", "/etc/shadow", "/", "/root/.ssh/id_rsa", "/proc/self/root/etc/passwd", "/proc/self/environ",
	"/proc/1/root", "/proc/self/cwd", "/proc/self/fd/0", "/dev/null", "/dev/zero", "/dev/random", "/sys/kernel/notes",
	"/tmp", "//etc//passwd", "/./etc/passwd",
}

func TestPathCorpusDenied(t *testing.T) {
	f := newFixture(t)
	var cases []string
	for _, e := range escapes {
		cases = append(cases, e)
		if e != "" && !strings.HasPrefix(e, "~") && !strings.HasPrefix(e, "\x00") {
			cases = append(cases, f.root+"/"+e)
		}
	}
	cases = append(cases, absolutes...)
	cases = append(cases, f.outside, f.home+"/.ssh/id_rsa", f.data+"/api-token", f.base, f.root+"/../outside.txt")
	n := 0
	for _, c := range cases {
		for _, op := range []string{"read", "write"} {
			n++
			var (
				file *os.File
				err  error
			)
			if op == "read" {
				file, _, err = f.paths.OpenRead(c)
			} else {
				file, _, err = f.paths.OpenWrite(c, true)
			}
			if err == nil {
				b, _ := io.ReadAll(file)
				file.Close()
				t.Errorf("%s %q was allowed (read %q)", op, c, b)
				continue
			}
			// Some refusals are "does not exist" or "is a folder": the
			// path stayed inside the root. Everything else is ErrDenied.
			if !errors.Is(err, ErrDenied) && !strings.Contains(err.Error(), "does not exist") && !strings.Contains(err.Error(), "folder") && !strings.Contains(err.Error(), "empty") {
				t.Errorf("%s %q: unexpected error %v", op, c, err)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d cases", n)
	}
	t.Logf("%d path cases refused", n)
	// Nothing outside was written.
	if b, _ := os.ReadFile(f.outside); string(b) != secret {
		t.Fatalf("the outside file changed: %q", b)
	}
	if b, _ := os.ReadFile(f.data + "/api-token"); string(b) != secret {
		t.Fatalf("the token changed: %q", b)
	}
}

func TestPathControlsAllowed(t *testing.T) {
	f := newFixture(t)
	reads := map[string]string{
		"a.txt": "hello\nworld\nthird\n", "./a.txt": "hello\nworld\nthird\n", "sub/b.txt": "b", "sub//b.txt": "b",
		f.root + "/a.txt": "hello\nworld\nthird\n", "link_in": "hello\nworld\nthird\n", "名字.txt": "名",
		"dir with space/x.txt": "x", f.root + "/sub/b.txt": "b",
	}
	for p, want := range reads {
		file, real, err := f.paths.OpenRead(p)
		if err != nil {
			t.Errorf("read %q: %v", p, err)
			continue
		}
		b, _ := io.ReadAll(file)
		file.Close()
		if string(b) != want || !strings.HasPrefix(real, f.root+"/") {
			t.Errorf("read %q: %q at %s", p, b, real)
		}
	}
	for _, p := range []string{"new/dir/file.txt", "a.txt", f.root + "/abs.txt", "sub/c.txt"} {
		file, real, err := f.paths.OpenWrite(p, false)
		if err != nil {
			t.Errorf("write %q: %v", p, err)
			continue
		}
		_, _ = file.WriteString("written")
		file.Close()
		if b, _ := os.ReadFile(real); string(b) != "written" {
			t.Errorf("write %q landed at %s with %q", p, real, b)
		}
	}
}

// TestSymlinkSwappedAfterCheck flips a name between a regular file and a
// symlink to a secret while it is opened over and over: the secret never
// comes back, because the file actually opened is what is checked.
func TestSymlinkSwappedAfterCheck(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	name := filepath.Join(f.root, "swap")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		targets := []string{f.outside, f.data + "/api-token", f.home + "/.ssh/id_rsa", "/etc/passwd"}
		for i := 0; !stop.Load(); i++ {
			tmp := name + ".tmp"
			_ = os.Remove(tmp)
			if i%2 == 0 {
				_ = os.WriteFile(tmp, []byte("plain"), 0o644)
			} else {
				_ = os.Symlink(targets[i/2%len(targets)], tmp)
			}
			_ = os.Rename(tmp, name)
		}
	})
	opened := 0
	for range 3000 {
		file, _, err := f.paths.OpenRead("swap")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(file)
		file.Close()
		opened++
		if !bytes.Equal(b, []byte("plain")) {
			t.Fatalf("read %q through a swapped symlink", b)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d of 3000 opens got the plain file; the rest were refused", opened)
}

func TestNoRoots(t *testing.T) {
	p, err := NewPaths(nil, t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.OpenRead("/etc/hostname"); !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "tools.roots") {
		t.Fatalf("no roots: %v", err)
	}
	if _, err := NewPaths([]string{"/does/not/exist"}, "", ""); err == nil || !strings.Contains(err.Error(), "tools.roots") {
		t.Fatalf("missing root: %v", err)
	}
}

func TestParseRef(t *testing.T) {
	tests := []struct {
		in       string
		path     string
		from, to int
		bad      bool
	}{
		{"%[a.txt]", "a.txt", 0, 0, false},
		{"%[/w/log.txt] Line 3 ~ Line 9", "/w/log.txt", 3, 9, false},
		{"%[/w/a]b.txt] line 1~line 2", "/w/a]b.txt", 1, 2, false},
		{"/plain/path.txt", "/plain/path.txt", 0, 0, false},
		{"%[x] Line 9 ~ Line 3", "", 0, 0, true},
		{"%[x] Line 0 ~ Line 3", "", 0, 0, true},
		{"%[]", "", 0, 0, true},
		{"%[x", "", 0, 0, true},
		{"%[x] garbage", "", 0, 0, true},
		{"", "", 0, 0, true},
	}
	for _, tt := range tests {
		r, err := ParseRef(tt.in)
		if (err != nil) != tt.bad || (!tt.bad && (r.Path != tt.path || r.From != tt.from || r.To != tt.to)) {
			t.Errorf("ParseRef(%q) = %+v, %v", tt.in, r, err)
		}
	}
}
