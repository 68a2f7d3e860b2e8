package persona

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// maxFileSize caps what file_load and a persona's reference may read: a
// prompt has no room for more, and a larger file is almost surely a mistake.
const maxFileSize = 1 << 20

// Error is a template or persona error at a place in a file. Line and Col are
// 1-based and Col counts runes; a zero Line or Col is left out of the text.
type Error struct {
	File      string
	Line, Col int
	Msg       string
	Err       error // the cause, if any (for errors.Is and errors.As)
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, "%d:", e.Col)
		}
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Template is a parsed root-prompt template. Render may be called from
// several goroutines at once; ReadFiles must come before any Render.
type Template struct {
	file  string
	nodes []node
	loads []*node           // every file_load expression, in source order
	files map[string]string // file_load path → content, filled by ReadFiles
}

// Parse parses src, the text of file (file only names the source in errors).
// A syntax error is an *Error.
func Parse(file, src string) (*Template, error) {
	return parse(file, src, 0)
}

// parse is Parse for a template that starts after line0 lines of its file,
// such as a persona body below its front-matter.
func parse(file, src string, line0 int) (*Template, error) {
	p := newParser(file, src, line0)
	nodes, _, err := p.seq(0, false, 0)
	if err != nil {
		return nil, err
	}
	t := &Template{file: file, nodes: nodes, files: map[string]string{}}
	t.loads = collectLoads(nodes, nil)
	return t, nil
}

func collectLoads(ns []node, out []*node) []*node {
	for i := range ns {
		switch ns[i].kind {
		case kindFile:
			out = append(out, &ns[i])
		case kindCond:
			out = collectLoads(ns[i].a, out)
			out = collectLoads(ns[i].b, out)
		}
	}
	return out
}

// ReadFiles reads the file of every ${file_load(path)} in t from fsys and keeps
// the contents for Render, so files are read once and not on every render.
// fsys is the persona's folder: an os.Root's FS for a folder on disk, which
// refuses symbolic links that lead outside it, or an embedded FS. A file that
// cannot be read is an *Error at its file_load expression.
func (t *Template) ReadFiles(fsys fs.FS) error {
	for _, n := range t.loads {
		if _, ok := t.files[n.text]; ok {
			continue
		}
		content, err := readLimited(fsys, n.text)
		if err != nil {
			return &Error{File: t.file, Line: n.line, Col: n.col,
				Msg: fmt.Sprintf("file_load(%s): %v", n.text, err), Err: err}
		}
		t.files[n.text] = strings.TrimSuffix(content, "\n") // no empty line after the file
	}
	return nil
}

// maxLorebookSize caps a persona's lorebook file, which may be larger than
// a prompt: only the entries that fire enter it.
const maxLorebookSize = 16 << 20

// readLimited reads name from fsys, refusing files over maxFileSize.
func readLimited(fsys fs.FS, name string) (string, error) {
	return readLimitedN(fsys, name, maxFileSize)
}

// readLimitedN reads name from fsys, refusing files over limit bytes.
func readLimitedN(fsys fs.FS, name string, limit int) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return "", fmt.Errorf("%s is a folder, not a file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return "", err
	}
	if len(data) > limit {
		return "", fmt.Errorf("%s is larger than %d bytes", name, limit)
	}
	return strings.ReplaceAll(string(data), "\r\n", "\n"), nil
}

// cleanPath checks a path named in a persona (file_load, reference) and
// returns it in the form fs.FS wants. Paths are relative to the persona's
// folder, use forward slashes and may not leave the folder.
func cleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("empty path")
	case strings.Contains(p, `\`):
		return "", fmt.Errorf("path %q: use / between folder names", p)
	case path.IsAbs(p) || (len(p) >= 2 && p[1] == ':'):
		return "", fmt.Errorf("path %q is absolute: name a file inside the persona folder, relative to it", p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q leaves the persona folder", p)
	}
	if c == "." || !fs.ValidPath(c) {
		return "", fmt.Errorf("path %q does not name a file", p)
	}
	return c, nil
}
