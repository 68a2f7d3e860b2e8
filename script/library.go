package script

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/generate"
)

// Ext is the extension of a script file.
const Ext = ".ai.yaml"

// ScriptsDir is the folder of a persona that holds its scripts.
const ScriptsDir = "scripts"

// maxFile bounds a script file.
const maxFile = 1 << 20

//go:embed builtin/*.ai.yaml
var builtinFiles embed.FS

// folder is a place scripts are read from: the built-in ones, a persona's
// scripts/ folder, or the folder of a file named on the command line.
type folder struct {
	fsys    fs.FS
	dir     string // within fsys
	display string // how its files are named in errors
	disk    string // its path on disk ("" for the built-in folder)
}

func builtinFolder() folder {
	return folder{fsys: builtinFiles, dir: "builtin", display: "builtin"}
}

func (f folder) show(rel string) string {
	if f.disk == "" {
		return f.display + "/" + rel
	}
	return filepath.Join(f.display, filepath.FromSlash(rel))
}

func (f folder) read(rel string) ([]byte, error) {
	file, err := f.fsys.Open(path.Join(f.dir, rel))
	if err != nil {
		return nil, err
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, maxFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("the file is over %d bytes", maxFile)
	}
	return b, nil
}

func (f folder) exists(rel string) bool {
	st, err := fs.Stat(f.fsys, path.Join(f.dir, rel))
	return err == nil && !st.IsDir()
}

// openFolder opens a folder on disk through an os.Root, so a script cannot
// reach outside it (a symbolic link leading out is refused).
func openFolder(dir, display string) (folder, func(), error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return folder{}, func() {}, err
	}
	return folder{fsys: root.FS(), dir: ".", display: display, disk: dir}, func() { root.Close() }, nil
}

// loader reads a script and what it extends. Names are looked up in the
// script's own folder, then in each of search.
type loader struct {
	search []folder
}

// maxDepth bounds a chain of extends.
const maxDepth = 8

// load reads rel in f and applies what it extends.
func (l *loader) load(f folder, rel string, chain []string) (*decl, []string, error) {
	display := f.show(rel)
	data, err := f.read(rel)
	if err != nil {
		return nil, nil, fmt.Errorf("script: read %s: %w", display, err)
	}
	d, err := parseDecl(display, data)
	if err != nil {
		return nil, nil, err
	}
	files := []string{display}
	if d.extends == "" {
		return d, files, nil
	}
	chain = append(chain, display)
	if len(chain) > maxDepth {
		return nil, nil, d.extendsAt.errorf("extends goes more than %d scripts deep", maxDepth)
	}
	pf, prel, err := l.resolve(d, f, rel)
	if err != nil {
		return nil, nil, err
	}
	if slices.Contains(chain, pf.show(prel)) {
		return nil, nil, d.extendsAt.errorf("extends makes a cycle: %s → %s", strings.Join(chain, " → "), pf.show(prel))
	}
	parent, pfiles, err := l.load(pf, prel, chain)
	if err != nil {
		return nil, nil, err
	}
	return merge(parent, d), append(files, pfiles...), nil
}

// resolve finds the script d extends. A path (with "/" or ending in
// ".yaml") is relative to d's folder and may not leave it. A name is
// looked for in d's folder, then in the search folders, never d itself —
// so a persona's compress.ai.yaml may extend the built-in compress.
func (l *loader) resolve(d *decl, f folder, rel string) (folder, string, error) {
	ref := d.extends
	self := f.show(rel)
	if strings.Contains(ref, "/") || strings.HasSuffix(ref, ".yaml") {
		p := path.Clean(path.Join(path.Dir(rel), ref))
		if p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(ref) {
			return folder{}, "", d.extendsAt.errorf("extends: %q leaves the script's folder", ref)
		}
		if !f.exists(p) {
			return folder{}, "", d.extendsAt.errorf("extends: no file %s", f.show(p))
		}
		return f, p, nil
	}
	if !validName(ref) {
		return folder{}, "", d.extendsAt.errorf("extends: %q is neither a script name nor a file", ref)
	}
	name := ref + Ext
	var looked []string
	for _, c := range append([]folder{f}, l.search...) {
		if c.show(name) == self || slices.Contains(looked, c.show(name)) {
			continue
		}
		looked = append(looked, c.show(name))
		if c.exists(name) {
			return c, name, nil
		}
	}
	return folder{}, "", d.extendsAt.errorf("extends: no script %q (looked for %s)", ref, strings.Join(looked, ", "))
}

// build reads a script from f and makes it.
func (l *loader) build(f folder, rel string) (*Script, error) {
	d, files, err := l.load(f, rel, nil)
	if err != nil {
		return nil, err
	}
	return build(d, files)
}

// CheckSource checks a script file before it is written into a persona's
// scripts/ folder (the persona/scripts component): its name ends in Ext
// and it parses.
func CheckSource(file string, data []byte) error {
	if !strings.HasSuffix(file, Ext) {
		return fmt.Errorf("a prompt script's file ends in %s", Ext)
	}
	_, err := Parse(file, data)
	return err
}

// Parse parses a script held in memory; file names it in errors. extends
// may name only built-in scripts.
func Parse(file string, data []byte) (*Script, error) {
	d, err := parseDecl(file, data)
	if err != nil {
		return nil, err
	}
	files := []string{file}
	if d.extends != "" {
		l := &loader{search: []folder{builtinFolder()}}
		if !validName(d.extends) || !builtinFolder().exists(d.extends+Ext) {
			return nil, d.extendsAt.errorf("extends: no built-in script %q", d.extends)
		}
		parent, pfiles, err := l.load(builtinFolder(), d.extends+Ext, []string{file})
		if err != nil {
			return nil, err
		}
		d, files = merge(parent, d), append(files, pfiles...)
	}
	return build(d, files)
}

// LibraryOptions configure NewLibrary.
type LibraryOptions struct {
	// Generator runs the scripts.
	Generator *generate.Generator
	// PersonaDir returns the current persona's folder ("" for the built-in
	// persona, which has no scripts/ of its own). nil: none.
	PersonaDir func() string
	Logger     *slog.Logger // nil: discard
}

// Library finds scripts by name: a persona's scripts/NAME.ai.yaml, else
// the built-in NAME.ai.yaml. Scripts are parsed once and parsed again when
// one of their files changes. It is safe for concurrent use.
type Library struct {
	gen     *generate.Generator
	persona func() string
	log     *slog.Logger

	mu    sync.Mutex
	cache map[string]*cached
}

type cached struct {
	script *Script
	deps   []dep
}

// dep is a file on disk a cached script depends on (or would, if it
// appeared: an override that does not exist yet).
type dep struct {
	path   string
	mod    time.Time
	size   int64
	exists bool
}

func stat(p string) dep {
	st, err := os.Stat(p)
	if err != nil {
		return dep{path: p}
	}
	return dep{path: p, mod: st.ModTime(), size: st.Size(), exists: true}
}

// NewLibrary makes a library.
func NewLibrary(o LibraryOptions) (*Library, error) {
	if o.Generator == nil {
		return nil, errors.New("script: a library needs a generator")
	}
	if o.PersonaDir == nil {
		o.PersonaDir = func() string { return "" }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Library{gen: o.Generator, persona: o.PersonaDir, log: o.Logger, cache: map[string]*cached{}}, nil
}

// Generator is the generator the library runs scripts with.
func (l *Library) Generator() *generate.Generator { return l.gen }

// personaFolder opens the persona's scripts/ folder, if it has one.
func personaFolder(dir string) (folder, func(), bool) {
	if dir == "" {
		return folder{}, func() {}, false
	}
	sd := filepath.Join(dir, ScriptsDir)
	if st, err := os.Stat(sd); err != nil || !st.IsDir() {
		return folder{}, func() {}, false
	}
	f, closeFn, err := openFolder(sd, sd)
	if err != nil {
		return folder{}, func() {}, false
	}
	return f, closeFn, true
}

// Load returns the script called name: the persona's override, else the
// built-in one. An unknown name is an error wrapping ErrNotFound.
func (l *Library) Load(name string) (*Script, error) {
	pdir := l.persona()
	key := pdir + "\x00" + name
	l.mu.Lock()
	c := l.cache[key]
	l.mu.Unlock()
	if c != nil && fresh(c.deps) {
		return c.script, nil
	}
	s, deps, err := find(name, pdir)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.cache[key] = &cached{script: s, deps: deps}
	l.mu.Unlock()
	return s, nil
}

// Find loads the script called name as a library for the persona folder
// personaDir ("" for none) would: the persona's scripts/NAME.ai.yaml, else
// the built-in one.
func Find(name, personaDir string) (*Script, error) {
	s, _, err := find(name, personaDir)
	return s, err
}

// find loads a script by name and lists the files on disk it depends on.
func find(name, pdir string) (*Script, []dep, error) {
	if !validName(name) {
		return nil, nil, fmt.Errorf("script %q: %w (a name holds letters, digits, '_' and '-')", name, ErrNotFound)
	}
	search := []folder{builtinFolder()}
	pf, closeFn, ok := personaFolder(pdir)
	defer closeFn()
	if ok {
		search = []folder{pf, builtinFolder()}
	}
	var deps []dep
	if pdir != "" {
		deps = append(deps, stat(filepath.Join(pdir, ScriptsDir, name+Ext)))
	}
	var from folder
	switch {
	case ok && pf.exists(name+Ext):
		from = pf
	case builtinFolder().exists(name + Ext):
		from = builtinFolder()
	default:
		return nil, nil, fmt.Errorf("script %q: %w: add %s to the persona's %s folder", name, ErrNotFound, name+Ext, ScriptsDir)
	}
	s, err := (&loader{search: search}).build(from, name+Ext)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range s.Files {
		if !strings.HasPrefix(f, "builtin/") {
			deps = append(deps, stat(f))
		}
	}
	return s, deps, nil
}

func fresh(deps []dep) bool {
	for _, d := range deps {
		if stat(d.path) != d {
			return false
		}
	}
	return true
}

// LoadFile reads a script file on disk. Names it extends are looked for in
// its folder, then in the persona's scripts/, then among the built-in ones.
func (l *Library) LoadFile(file string) (*Script, error) {
	return LoadFile(file, l.persona())
}

// LoadFile reads a script file on disk without a library; personaDir ("":
// none) adds a persona's scripts/ to where extends looks.
func LoadFile(file, personaDir string) (*Script, error) {
	dir, base := filepath.Split(file)
	if dir == "" {
		dir = "."
	}
	f, closeFn, err := openFolder(dir, filepath.Clean(dir))
	if err != nil {
		return nil, fmt.Errorf("script: open %s: %w", file, err)
	}
	defer closeFn()
	search := []folder{builtinFolder()}
	if pf, closeP, ok := personaFolder(personaDir); ok {
		defer closeP()
		search = []folder{pf, builtinFolder()}
	}
	return (&loader{search: search}).build(f, base)
}

// Run loads the script called name and runs it with the library's
// generator.
func (l *Library) Run(ctx context.Context, name string, in map[string]any, o RunOptions) (*Result, error) {
	s, err := l.Load(name)
	if err != nil {
		return nil, err
	}
	return s.Run(ctx, l.gen, in, o)
}

// Entry describes a script the library can run.
type Entry struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Origin is "builtin" or "persona" (a persona script overrides a
	// built-in one of the same name).
	Origin string `json:"origin"`
	File   string `json:"file"`
	Error  string `json:"error,omitempty"` // a script that does not load
}

// BuiltinNames lists the built-in scripts by name, in name order.
func BuiltinNames() []string {
	var out []string
	ents, _ := fs.ReadDir(builtinFiles, "builtin")
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), Ext); ok {
			out = append(out, n)
		}
	}
	return out
}

// List describes every script by name, in name order.
func (l *Library) List() []Entry {
	names := map[string]string{}
	for _, n := range BuiltinNames() {
		names[n] = "builtin"
	}
	if dir := l.persona(); dir != "" {
		if ents, err := os.ReadDir(filepath.Join(dir, ScriptsDir)); err == nil {
			for _, e := range ents {
				if n, ok := strings.CutSuffix(e.Name(), Ext); ok && validName(n) {
					names[n] = "persona"
				}
			}
		}
	}
	var out []Entry
	for _, n := range slices.Sorted(maps.Keys(names)) {
		e := Entry{Name: n, Origin: names[n]}
		if s, err := l.Load(n); err != nil {
			e.Error = err.Error()
		} else {
			e.Title, e.Description, e.File = s.Title, s.Description, s.File
		}
		out = append(out, e)
	}
	return out
}

// Broken lists the steps whose script does not load now: every LLM-backed
// step of cyan other than main-virtual's own turn runs a built-in script,
// which a persona overrides with a file of the same name in its scripts/
// folder, so a broken override is found by loading each built-in name as
// a step would. Each entry's Title is the built-in's (what the step does)
// and Error why the script does not load.
func (l *Library) Broken() []Entry {
	var out []Entry
	for _, n := range BuiltinNames() {
		if _, err := l.Load(n); err != nil {
			e := Entry{Name: n, Origin: "persona", Error: err.Error()}
			if data, rerr := fs.ReadFile(builtinFiles, "builtin/"+n+Ext); rerr == nil {
				if s, perr := Parse(n+Ext, data); perr == nil {
					e.Title = s.Title
				}
			}
			out = append(out, e)
		}
	}
	return out
}
