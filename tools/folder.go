package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Folder is one folder read and written the way the file tools read a
// root (a component's folder: custom tools, persona scripts, observers):
// through os.Root, so a symlink out of it leads nowhere; the file actually
// opened is checked again by its real path, read from the descriptor; and
// credential names and private keys (Secrets) are refused inside it too.
// It is the only way the tools of this package read a file besides Paths.
//
// The folder itself must be where it says: inside Within (a persona's
// scripts folder inside the persona), or, without Within, not a symlink —
// so a shared persona cannot ship its observers folder as a link to the
// home folder.
type Folder struct {
	Dir     string
	Within  string   // the folder Dir must resolve inside ("": Dir is no symlink)
	Secrets *Secrets // nil: DefaultSecrets
}

func (f Folder) secrets() *Secrets {
	if f.Secrets != nil {
		return f.Secrets
	}
	s, _ := NewSecrets(nil)
	return s
}

func (f Folder) open() (*os.Root, string, error) {
	real, err := filepath.EvalSymlinks(f.Dir)
	if err != nil {
		return nil, "", err
	}
	if f.Within != "" {
		base, err := filepath.EvalSymlinks(f.Within)
		if err != nil {
			return nil, "", err
		}
		if _, ok := within(base, real); !ok {
			return nil, "", denied("%s leads outside %s", f.Dir, f.Within)
		}
	} else if fi, err := os.Lstat(f.Dir); err != nil {
		return nil, "", err
	} else if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, "", denied("%s is a symlink; a component's folder must be a folder", f.Dir)
	}
	r, err := os.OpenRoot(real)
	return r, real, err
}

// check refuses what a file tool refuses: a name outside the folder, a
// credential name, a path that resolves out of the folder.
func (f Folder) check(name string, file *os.File, real string) error {
	if !plainFile(name) {
		return fmt.Errorf("file %q: give a plain file name in the folder", name)
	}
	if what, ok := f.secrets().Match(name); ok {
		return denied("%s is a credential file (%s, in tools.secrets' list)", name, what)
	}
	if file == nil {
		return nil
	}
	got, err := fdPath(file)
	if err != nil {
		got, err = filepath.EvalSymlinks(filepath.Join(real, name))
		if err != nil {
			return err
		}
	}
	if _, ok := within(real, got); !ok {
		return denied("%s resolves outside its folder", name)
	}
	if what, ok := f.secrets().Match(got); ok {
		return denied("%s is a credential file (%s, in tools.secrets' list)", name, what)
	}
	return regular(file, name)
}

// ReadFile reads a plain file of the folder, at most max bytes.
func (f Folder) ReadFile(name string, max int64) ([]byte, error) {
	if err := f.check(name, nil, ""); err != nil {
		return nil, err
	}
	root, real, err := f.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	file, err := root.OpenFile(name, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, openError(name, err)
	}
	defer file.Close()
	if err := f.check(name, file, real); err != nil {
		return nil, err
	}
	if err := noKey(file, name); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(file, max))
}

// Files lists the plain files of the folder (no folders, no hidden files,
// no symlinks, no credential names), by name.
func (f Folder) Files() []string {
	root, _, err := f.open()
	if err != nil {
		return nil
	}
	defer root.Close()
	d, err := root.Open(".")
	if err != nil {
		return nil
	}
	defer d.Close()
	entries, _ := d.ReadDir(-1)
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && plainFile(e.Name()) {
			if _, secret := f.secrets().Match(e.Name()); !secret {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// WriteFile writes a plain file of the folder, creating the folder; it
// never writes through a symlink.
func (f Folder) WriteFile(name string, data []byte) error {
	if err := f.check(name, nil, ""); err != nil {
		return err
	}
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return err
	}
	root, real, err := f.open()
	if err != nil {
		return err
	}
	defer root.Close()
	if fi, err := root.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return denied("%s is a symlink; it is not written through", name)
	}
	file, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE|nonblock, 0o644)
	if err != nil {
		return openError(name, err)
	}
	err = f.check(name, file, real)
	if err == nil {
		err = noKey(file, name)
	}
	if err == nil {
		err = file.Truncate(0)
	}
	if err == nil {
		_, err = file.Write(data)
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// Exists reports whether the folder holds name (not following a final
// symlink).
func (f Folder) Exists(name string) bool {
	root, _, err := f.open()
	if err != nil {
		return false
	}
	defer root.Close()
	_, err = root.Lstat(name)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}
