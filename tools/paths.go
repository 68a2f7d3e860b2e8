package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"unicode"

	"github.com/cyan-agent/cyan/notation"
)

// ErrDenied is wrapped by every path or command the safety checks refuse.
var ErrDenied = errors.New("denied")

// Ref is a file reference as the notation writes it: "%[path]" or
// "%[path] Line n ~ Line m" (From and To are 0 when there is no range).
type Ref struct {
	Path     string
	From, To int
}

// ParseRef reads a reference; a plain path (no "%[") is a reference to it.
func ParseRef(s string) (Ref, error) {
	s = strings.TrimSpace(s)
	body, ok := strings.CutPrefix(s, "%[")
	if !ok {
		if s == "" {
			return Ref{}, errors.New("the path is empty")
		}
		return Ref{Path: s}, nil
	}
	for i := len(body) - 1; i >= 0; i-- {
		if body[i] != ']' {
			continue
		}
		rest := strings.TrimSpace(body[i+1:])
		ref := Ref{Path: body[:i]}
		if rest != "" {
			from, to, ok := notation.LineRange(rest)
			if !ok {
				continue
			}
			ref.From, ref.To = from, to
			if ref.From < 1 || ref.To < ref.From {
				return Ref{}, fmt.Errorf("line range %d ~ %d is empty; lines count from 1 and the end is not before the start", ref.From, ref.To)
			}
		}
		if ref.Path == "" {
			return Ref{}, errors.New("the reference %[] names no file")
		}
		return ref, nil
	}
	return Ref{}, errors.New(`a reference is %[path] or "%[path] Line n ~ Line m"`)
}

// Paths confines file tools to the configured roots. A path is resolved
// through os.Root, so "..", absolute paths, symlinks and /proc tricks
// cannot leave a root; and whatever the roots say, the data dir (the
// store, the token file, the lock), ~/.ssh and ~/.gnupg, every credential
// file or folder of the secrets list (Secrets: .env, .aws, .netrc, shell
// histories, …), any file that holds a private key, /proc, /sys and /dev
// are denied — checked on the path given and again on the file actually
// opened (its real path, read from the open descriptor, and its first
// bytes), so a symlink swapped in after the check gains nothing.
type Paths struct {
	roots   []rootDir
	denied  []string // real, absolute prefixes
	secrets *Secrets
}

type rootDir struct {
	given, real string
	root        *os.Root
}

// NewPaths opens the roots. dataDir and home name the always-denied
// places; a root that does not exist is an error that says so.
// The secrets list is DefaultSecrets until WithSecrets sets another.
func NewPaths(roots []string, dataDir, home string) (*Paths, error) {
	def, _ := NewSecrets(nil)
	p := &Paths{secrets: def}
	for _, d := range []string{"/proc", "/sys", "/dev"} {
		p.denied = append(p.denied, d)
	}
	for _, d := range []string{dataDir, filepath.Join(home, ".ssh"), filepath.Join(home, ".gnupg")} {
		if d == "" || d == ".ssh" || d == ".gnupg" {
			continue
		}
		abs, _ := filepath.Abs(d)
		p.denied = append(p.denied, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			p.denied = append(p.denied, real)
		}
	}
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("tools: root %s: %w", r, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("tools: root %s does not exist or cannot be read (create it, or remove it from tools.roots): %w", r, err)
		}
		root, err := os.OpenRoot(real)
		if err != nil {
			return nil, fmt.Errorf("tools: root %s: %w", r, err)
		}
		p.roots = append(p.roots, rootDir{given: filepath.Clean(abs), real: real, root: root})
	}
	return p, nil
}

// WithSecrets sets the secrets list (tools.secrets); call it before the
// paths are used.
func (p *Paths) WithSecrets(s *Secrets) *Paths {
	if s != nil {
		p.secrets = s
	}
	return p
}

// Close releases the roots.
func (p *Paths) Close() {
	for _, r := range p.roots {
		_ = r.root.Close()
	}
}

// Roots lists the roots' real paths; the first is the working folder.
func (p *Paths) Roots() []string {
	var out []string
	for _, r := range p.roots {
		out = append(out, r.real)
	}
	return out
}

var percentEncoded = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)

func denied(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrDenied, fmt.Sprintf(format, args...))
}

// resolve finds the root of a path and its slash-separated name inside it.
func (p *Paths) resolve(raw string) (rootDir, string, error) {
	switch {
	case len(p.roots) == 0:
		return rootDir{}, "", denied("no folder is open to file tools; the owner can list folders in tools.roots")
	case raw == "":
		return rootDir{}, "", errors.New("the path is empty")
	case strings.ContainsRune(raw, 0):
		return rootDir{}, "", denied("the path contains a NUL byte")
	case strings.ContainsFunc(raw, unicode.IsControl):
		return rootDir{}, "", denied("the path contains a control character")
	case strings.ContainsRune(raw, '\\'):
		return rootDir{}, "", denied("the path contains a backslash; write it with /")
	case strings.HasPrefix(raw, "~"):
		return rootDir{}, "", denied("~ is not expanded; give the full path")
	case percentEncoded.MatchString(raw):
		return rootDir{}, "", denied("the path looks percent-encoded; write it plainly")
	case len(raw) > 4096:
		return rootDir{}, "", denied("the path is too long")
	}
	for _, part := range strings.Split(raw, "/") {
		if part == ".." {
			return rootDir{}, "", denied("the path contains \"..\"; give the full path instead")
		}
	}
	clean := filepath.Clean(raw)
	if !filepath.IsAbs(clean) {
		return p.roots[0], filepath.ToSlash(clean), p.lexical(clean)
	}
	for _, r := range p.roots {
		for _, base := range []string{r.real, r.given} {
			if rel, ok := within(base, clean); ok {
				return r, rel, p.lexical(clean)
			}
		}
	}
	return rootDir{}, "", denied("%s is outside the folders open to file tools (%s)", clean, strings.Join(p.Roots(), ", "))
}

// within returns target's name relative to base when target is base or
// below it.
func within(base, target string) (string, bool) {
	if target == base {
		return ".", true
	}
	prefix := strings.TrimSuffix(base, string(filepath.Separator)) + string(filepath.Separator)
	if rest, ok := strings.CutPrefix(target, prefix); ok {
		return filepath.ToSlash(rest), true
	}
	return "", false
}

// lexical denies the credential names (Secrets) wherever they appear in a
// path.
func (p *Paths) lexical(name string) error {
	if what, ok := p.secrets.Match(name); ok {
		return denied("%s is a credential file or folder (%s, in tools.secrets' list); file tools never read or write it", name, what)
	}
	if filepath.IsAbs(name) {
		return p.checkReal(name)
	}
	return nil
}

// checkReal denies a real path under a denied prefix.
func (p *Paths) checkReal(real string) error {
	for _, d := range p.denied {
		if _, ok := within(d, real); ok {
			return denied("%s is in a place file tools may never touch", real)
		}
	}
	return nil
}

// noKey denies a regular file that is a credential by what it holds
// (SecretContent: a private key, a git config with a token).
func noKey(f *os.File, raw string) error {
	head := make([]byte, contentHeadBytes)
	n, _ := f.ReadAt(head, 0)
	name := raw
	if real, err := fdPath(f); err == nil {
		name = real
	}
	if what, ok := SecretContent(name, head[:n]); ok {
		return denied("%s holds %s; file tools never read or write one", raw, what)
	}
	return nil
}

// verify checks the file actually opened: its real path, read from the
// descriptor, must be inside the root and not denied.
func (p *Paths) verify(r rootDir, f *os.File, rel string) (string, error) {
	real, err := fdPath(f)
	if err != nil {
		// No /proc: fall back to resolving the name (racy, but confined
		// by os.Root all the same).
		real, err = filepath.EvalSymlinks(filepath.Join(r.real, filepath.FromSlash(rel)))
		if err != nil {
			return "", err
		}
	}
	if _, ok := within(r.real, real); !ok {
		return "", denied("%s resolves outside its folder", rel)
	}
	if err := p.lexical(real); err != nil {
		return "", err
	}
	return real, nil
}

func fdPath(f *os.File) (string, error) {
	if runtime.GOOS != "linux" {
		return "", errors.ErrUnsupported
	}
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
}

// OpenRead opens a regular file for reading. FIFOs, devices, sockets and
// folders are refused (the file is opened without blocking first, so a
// FIFO cannot hang the call).
func (p *Paths) OpenRead(raw string) (*os.File, string, error) {
	r, rel, err := p.resolve(raw)
	if err != nil {
		return nil, "", err
	}
	f, err := r.root.OpenFile(rel, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, "", openError(raw, err)
	}
	real, err := p.verify(r, f, rel)
	if err == nil {
		err = regular(f, raw)
	}
	if err == nil {
		err = noKey(f, raw)
	}
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return f, real, nil
}

// OpenWrite opens (creating it and its folders when needed) a regular file
// for writing, truncated unless appending. It does not write through a
// symlink at the end of the path.
func (p *Paths) OpenWrite(raw string, appendTo bool) (*os.File, string, error) {
	r, rel, err := p.resolve(raw)
	if err != nil {
		return nil, "", err
	}
	if rel == "." {
		return nil, "", errors.New("the path is a folder; name a file in it")
	}
	if dir := path.Dir(rel); dir != "." {
		if err := r.root.MkdirAll(dir, 0o755); err != nil {
			return nil, "", openError(raw, err)
		}
		d, err := r.root.Open(dir)
		if err != nil {
			return nil, "", openError(raw, err)
		}
		_, err = p.verify(r, d, dir)
		d.Close()
		if err != nil {
			return nil, "", err
		}
	}
	if fi, err := r.root.Lstat(rel); err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, "", denied("%s is a symlink; write to the file it points to", raw)
		}
		if !fi.Mode().IsRegular() {
			return nil, "", denied("%s is not a regular file", raw)
		}
	}
	f, err := r.root.OpenFile(rel, os.O_RDWR|os.O_CREATE|nonblock, 0o644)
	if err != nil {
		return nil, "", openError(raw, err)
	}
	real, err := p.verify(r, f, rel)
	if err == nil {
		err = regular(f, raw)
	}
	if err == nil {
		err = noKey(f, raw)
	}
	if err == nil && !appendTo {
		err = f.Truncate(0)
	}
	if err == nil && appendTo {
		_, err = f.Seek(0, 2)
	}
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return f, real, nil
}

func regular(f *os.File, raw string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		return fmt.Errorf("%s is a folder; name a file in it (use terminal with ls to list a folder)", raw)
	case !fi.Mode().IsRegular():
		return denied("%s is not a regular file (a device, FIFO or socket)", raw)
	}
	return nil
}

func openError(raw string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", raw)
	case strings.Contains(err.Error(), "escapes"), strings.Contains(err.Error(), "outside"):
		return denied("%s leads outside its folder", raw)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied by the system", raw)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", raw, pe.Err)
	}
	return err
}

// Mentions reports the first always-denied place a command names (the
// data dir, a credential name of Secrets, the token file, /proc/*/root),
// for the terminal's lexical check.
func (p *Paths) Mentions(cmd string) (string, bool) {
	for _, d := range p.denied {
		if d == "/proc" || d == "/sys" || d == "/dev" {
			continue
		}
		if strings.Contains(cmd, d) {
			return d, true
		}
	}
	if w, ok := p.secrets.Mentions(cmd); ok {
		return w, true
	}
	for _, w := range []string{"api-token", "environ"} {
		if strings.Contains(cmd, w) {
			return w, true
		}
	}
	if strings.Contains(cmd, "/proc/") && strings.Contains(cmd, "root") {
		return "/proc/*/root", true
	}
	return "", false
}
