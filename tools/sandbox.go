package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Confinement modes (tools.terminal.sandbox).
const (
	// ConfineAuto confines with bubblewrap; where it cannot, commands do
	// not run, and the error says why and what to do.
	ConfineAuto = "auto"
	// ConfineBwrap is ConfineAuto, said explicitly.
	ConfineBwrap = "bwrap"
	// ConfineOff runs commands unconfined (only the terminal's lexical
	// checks hold); cyan doctor warns.
	ConfineOff = "off"
)

// ErrNoSandbox is wrapped by the error of a command that was not run
// because it could not be confined.
var ErrNoSandbox = errors.New("no sandbox")

// Jail confines the programs of the terminal and of extra tools to
// tools.roots with bubblewrap (bwrap): each runs in new mount, PID, IPC,
// UTS, network, cgroup and user namespaces, with every capability dropped
// (root too), no further user namespaces (so no mount can be undone), a
// session of its own (no TIOCSTI into the daemon's terminal), and killed
// with the daemon. Its file system is built from nothing: the system's
// programs and libraries (/usr and its /bin, /lib links) and a few files of
// /etc read-only, a private, small /tmp, a fresh /proc of its own processes, a
// minimal /dev — and the roots, writable. Nothing else of the machine
// exists inside: not the home folder, not the data dir, not the daemon's
// /proc. Where a root holds something never to be read — the data dir,
// ~/.ssh, ~/.gnupg, any credential file or folder of the secrets list
// (Secrets: .ssh, .env, .aws, .netrc, .kube/config, browser logins, shell
// histories, …), any file that is one by what it holds (SecretContent: a
// private key, a git config with a token) — it is covered (an empty read-only
// folder, or /dev/null), found afresh before every run. Each program runs
// under limits (Limits: memory, shared and tmpfs pages included, processes,
// CPU time, disk writes, the size of /tmp and /dev/shm) that stop a fork
// bomb, a runaway allocation or a disk filler, and its result says which
// limit stopped it; /dev is read-only. Since the file system itself is built this way, no
// spelling of a path (quotes, globs, "..", symlinks, variables,
// subshells, here-docs, /proc/*/root) reaches past it; the terminal's
// lexical check stays in front as a first, cheap refusal. Without a
// network namespace of the daemon's, a command cannot reach the API on
// loopback either (and approve its own calls); the terminal has no network.
//
// Why bubblewrap and not Landlock: both were measured on the machine this
// was built on (Linux 6.18, running as root): the kernel offers Landlock ABI
// 7, and bwrap 0.8.0 makes its namespaces as root and as a user. Landlock
// only allows, by file hierarchy: it cannot deny a .env file or the data
// dir inside an allowed root without also denying new files next to them,
// it leaves paths visible to stat, and it needs the cyan binary re-executed
// in every test binary that runs a command. bwrap builds the view itself,
// hides what it does not mount, covers what must stay unread inside a
// root, and gives each command its own PID and network namespaces.
// Its cost is one package (bubblewrap), and hosts that forbid user
// namespaces to containers; there the terminal refuses to run and says so.
type Jail struct {
	mode   string
	bwrap  string
	roots  []string // real paths
	hidden []string // real paths never to be read
	home   string
	err    error // why commands cannot be confined
	desc   string
	userns bool // bwrap knows --disable-userns
	sized  bool // bwrap knows --size (0.7 and later)

	secrets *Secrets
	limits  Limits
	prlimit string // the prlimit program that sets the limits inside
	// noMemCap keeps runs out of a memory cgroup, so that a test can try
	// what holds where none can be made.
	noMemCap bool

	keysMu sync.Mutex
	keys   map[string]keyStamp // files looked at for a private key
}

// keyStamp is what was seen of a file: it is looked at again when it
// changes.
type keyStamp struct {
	size  int64
	mtime time.Time
	key   bool
}

// JailOptions configure NewJail.
type JailOptions struct {
	Mode    string   // ConfineAuto (""), ConfineBwrap or ConfineOff
	Roots   []string // the roots, real paths (Paths.Roots)
	DataDir string
	Home    string
	// Bwrap is the bwrap program; "" finds it on PATH.
	Bwrap string
	// Secrets are the credential files covered inside (nil:
	// DefaultSecrets).
	Secrets *Secrets
	// Limits bound each program (zero fields: the defaults).
	Limits Limits
}

// NewJail finds bwrap and tries it once. A jail that cannot confine
// still comes back: Err says why, and its commands fail with that.
func NewJail(o JailOptions) *Jail {
	j := &Jail{mode: o.Mode, home: o.Home, roots: o.Roots, secrets: o.Secrets, limits: o.Limits.withDefaults(), keys: map[string]keyStamp{}}
	if j.secrets == nil {
		j.secrets, _ = NewSecrets(nil)
	}
	if j.mode == "" {
		j.mode = ConfineAuto
	}
	if j.mode == ConfineOff {
		j.desc = "off: commands run unconfined (tools.terminal.sandbox: off)"
		return j
	}
	for _, d := range []string{o.DataDir, filepath.Join(o.Home, ".ssh"), filepath.Join(o.Home, ".gnupg")} {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		j.hidden = append(j.hidden, filepath.Clean(d))
		if real, err := filepath.EvalSymlinks(d); err == nil && real != filepath.Clean(d) {
			j.hidden = append(j.hidden, real)
		}
	}
	if runtime.GOOS != "linux" {
		j.err = fmt.Errorf("%w: the terminal's sandbox needs Linux (bubblewrap); on %s set tools.terminal.sandbox: off to run commands unconfined", ErrNoSandbox, runtime.GOOS)
		return j
	}
	j.bwrap = o.Bwrap
	if j.bwrap == "" {
		p, err := exec.LookPath("bwrap")
		if err != nil {
			j.err = fmt.Errorf("%w: bwrap is not installed; install bubblewrap (apt install bubblewrap, dnf install bubblewrap) and restart cyan, or set tools.terminal.sandbox: off to run commands unconfined", ErrNoSandbox)
			return j
		}
		j.bwrap = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	help, _ := exec.CommandContext(ctx, j.bwrap, "--help").CombinedOutput()
	j.userns = bytes.Contains(help, []byte("--disable-userns"))
	j.sized = bytes.Contains(help, []byte("--size"))
	ver, _ := exec.CommandContext(ctx, j.bwrap, "--version").Output()
	if !j.limits.off() {
		p, err := exec.LookPath("prlimit")
		if err != nil || !(strings.HasPrefix(p, "/usr/") || strings.HasPrefix(p, "/bin/") || strings.HasPrefix(p, "/sbin/")) {
			j.err = fmt.Errorf("%w: prlimit (util-linux) is not installed under /usr, so commands cannot be given their memory, process, CPU and disk limits; install util-linux, or set tools.terminal.max_memory_mb, max_processes, max_cpu_seconds and max_disk_mb to -1", ErrNoSandbox)
			return j
		}
		j.prlimit = p
	}
	argv, err := j.Wrap([]string{"/bin/true"}, "/", nil, false) // the first look at the roots: not part of the probe's time
	if err == nil {
		var out []byte
		probe, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err = exec.CommandContext(probe, argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	if err != nil {
		j.err = fmt.Errorf("%w: %s cannot make a sandbox here (%v); allow user namespaces (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap) or set tools.terminal.sandbox: off to run commands unconfined", ErrNoSandbox, j.bwrap, err)
		return j
	}
	j.desc = fmt.Sprintf("bwrap: %s (%s): commands see only tools.roots, no network; %s", strings.TrimSpace(string(ver)), j.bwrap, j.limits)
	return j
}

// Err says why commands cannot be confined; nil when they can (or the
// jail is off).
func (j *Jail) Err() error { return j.err }

// Off reports whether the owner turned confinement off.
func (j *Jail) Off() bool { return j.mode == ConfineOff }

// String says which protection is active.
func (j *Jail) String() string {
	if j.err != nil {
		return j.err.Error()
	}
	return j.desc
}

// etcFiles are the files of /etc a program commonly needs; the rest of
// /etc (shadow, host keys, other programs' secrets) stays out.
var etcFiles = []string{"passwd", "group", "hostname", "hosts", "resolv.conf", "nsswitch.conf", "host.conf",
	"localtime", "timezone", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates",
	"ca-certificates.conf", "mime.types", "terminfo", "inputrc", "locale.alias", "locale.conf", "gitconfig",
	"os-release", "debian_version", "bash.bashrc", "profile", "environment", "magic", "protocols", "services"}

// Wrap returns the command line that runs argv confined, in dir, with
// readOnly folders visible besides the roots, and the daemon's network
// only when network is set. dir must be a root, in one, or in readOnly.
func (j *Jail) Wrap(argv []string, dir string, readOnly []string, network bool) ([]string, error) {
	if j.mode == ConfineOff {
		return argv, nil
	}
	if j.err != nil {
		return nil, j.err
	}
	a := []string{j.bwrap, "--die-with-parent", "--new-session",
		"--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"}
	if !network {
		a = append(a, "--unshare-net")
	}
	if j.userns {
		a = append(a, "--disable-userns")
	}
	a = append(a, "--cap-drop", "ALL", "--hostname", "cyan-sandbox", "--ro-bind", "/usr", "/usr")
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	for _, f := range etcFiles {
		a = append(a, "--ro-bind-try", "/etc/"+f, "/etc/"+f)
	}
	// A fresh /proc, read-only whole: the kernel's global files in it
	// (sysctls, sysrq-trigger) are writable by uid 0 without any capability.
	// /dev read-only but for a /dev/shm of its own: each tmpfs a program
	// may write has a size (Limits.TmpMB).
	a = append(a, "--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev")
	a = append(a, j.limits.tmpfs("/dev/shm", j.sized)...)
	a = append(a, "--remount-ro", "/dev")
	a = append(a, j.limits.tmpfs("/tmp", j.sized)...)
	for _, r := range j.roots {
		a = append(a, "--bind", r, r)
	}
	for _, r := range readOnly {
		a = append(a, "--ro-bind", r, r)
	}
	masks, err := j.masks(append(slices.Clone(j.roots), readOnly...))
	if err != nil {
		return nil, err
	}
	a = append(a, masks...)
	home := "/tmp"
	for _, r := range j.roots {
		if _, ok := within(r, j.home); ok && j.home != "" {
			home = j.home
		}
	}
	a = append(a, "--setenv", "HOME", home, "--setenv", "TMPDIR", "/tmp", "--chdir", dir, "--")
	if j.prlimit != "" {
		a = append(a, j.limits.prlimit(j.prlimit)...)
	}
	return append(a, argv...), nil
}

// maxWalk bounds the entries looked at for files to cover before one run.
const maxWalk = 500_000

// masks covers, inside the visible folders, what must never be read.
func (j *Jail) masks(visible []string) ([]string, error) {
	var dirs, files []string
	seen := 0
	for _, top := range visible {
		for _, h := range j.hidden {
			if _, ok := within(top, h); ok {
				if fi, err := os.Stat(h); err == nil && fi.IsDir() {
					dirs = append(dirs, h)
				}
			}
		}
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: unreadable inside too
			}
			if d.IsDir() && slices.Contains(j.hidden, p) {
				return filepath.SkipDir // covered whole, above
			}
			if seen++; seen > maxWalk {
				return fmt.Errorf("%w: tools.roots hold more than %d files, too many to check for secrets before each command; name smaller folders in tools.roots", ErrNoSandbox, maxWalk)
			}
			if !j.secrets.MatchTail(p) && !(d.Type().IsRegular() && j.isKey(p, d)) {
				return nil
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil // dangling: nothing to read
			}
			inside := false
			for _, v := range visible {
				if _, ok := within(v, real); ok {
					inside = true
				}
			}
			if !inside {
				return nil // points outside: not there in the sandbox
			}
			fi, err := os.Stat(real)
			switch {
			case err != nil:
			case fi.IsDir():
				dirs = append(dirs, real)
			default:
				files = append(files, real)
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	slices.Sort(files)
	files = slices.Compact(files)
	var a []string
	for _, d := range dirs {
		a = append(a, "--tmpfs", d, "--remount-ro", d)
	}
	for _, f := range files {
		a = append(a, "--ro-bind", "/dev/null", f)
	}
	return a, nil
}

// maxKeyFile is the largest file looked at for a private key: key files
// are a few KiB (an RSA 16384 key in PEM is under 13 KiB). A git config is
// looked at whatever its size (its head only).
const maxKeyFile = 16 << 10

// isKey reports whether a regular file in a root is a credential by what
// it holds (SecretContent: a private key, a git config with a token),
// remembering the answer until the file changes.
func (j *Jail) isKey(p string, d fs.DirEntry) bool {
	fi, err := d.Info()
	if err != nil || fi.Size() == 0 || (fi.Size() > maxKeyFile && !IsGitConfig(p)) {
		return false
	}
	j.keysMu.Lock()
	st, ok := j.keys[p]
	j.keysMu.Unlock()
	if ok && st.size == fi.Size() && st.mtime.Equal(fi.ModTime()) {
		return st.key
	}
	key := false
	if f, err := os.OpenFile(p, os.O_RDONLY|nonblock, 0); err == nil {
		head := make([]byte, contentHeadBytes)
		n, _ := f.ReadAt(head, 0)
		f.Close()
		_, key = SecretContent(p, head[:n])
	}
	j.keysMu.Lock()
	j.keys[p] = keyStamp{size: fi.Size(), mtime: fi.ModTime(), key: key}
	j.keysMu.Unlock()
	return key
}
