package script

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/builtins"
	gconfig "github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/parser"
	"go.yaml.in/yaml/v3"
)

// maxRendered bounds what one template may render.
const maxRendered = 1 << 20

// template is one templated string of a script, Jinja syntax, with where
// it sits in its file.
type template struct {
	src  string
	t    *exec.Template // nil when src has no template syntax
	file string
	at   position
}

// position maps a place in a YAML scalar back to its file.
type position struct {
	line, col int  // of the scalar's first character (its quote or indicator)
	block     bool // a literal or folded block: text starts on the next line
	quoted    bool
	indent    int // a block's content indentation
}

// positionOf is where node's text starts; lines is the file's text.
func positionOf(n *yaml.Node, lines []string, line0 int) position {
	p := position{line: n.Line + line0, col: n.Column}
	switch {
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		p.block = true
		for i := n.Line + line0; i < len(lines); i++ { // lines[i] is file line i+1
			if l := lines[i]; strings.TrimSpace(l) != "" {
				p.indent = len(l) - len(strings.TrimLeft(l, " "))
				break
			}
		}
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		p.quoted = true
	}
	return p
}

// at maps a 1-based line and column of the text to the file.
func (p position) at(line, col int) (int, int) {
	switch {
	case p.block:
		return p.line + line, p.indent + col
	case line <= 1:
		off := 0
		if p.quoted {
			off = 1
		}
		return p.line, p.col + off + col - 1
	}
	return p.line + line - 1, col
}

// templateConfig is Jinja's, except that blocks take their own line with
// them ({% if %} on a line of its own leaves no blank line) and that a
// name nobody defined is an error, not silence.
func templateConfig() *gconfig.Config {
	c := gconfig.New()
	c.StrictUndefined = true
	c.TrimBlocks = true
	c.LeftStripBlocks = true
	c.KeepTrailingNewline = true
	return c
}

func templateEnv() *exec.Environment {
	return &exec.Environment{
		Context:           exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables),
		Filters:           builtins.Filters,
		Tests:             builtins.Tests,
		ControlStructures: builtins.ControlStructures,
		Methods:           builtins.Methods,
	}
}

// oneLoader serves a single template and refuses every other name, so
// {% include %}, {% import %} and {% extends %} cannot read files.
type oneLoader struct{ name, src string }

func (l *oneLoader) Read(path string) (io.Reader, error) {
	if path == l.name {
		return strings.NewReader(l.src), nil
	}
	return nil, fmt.Errorf("a prompt script cannot load the template %q: templates do not include other files (use extends: in the front-matter)", path)
}

func (l *oneLoader) Resolve(path string) (string, error) { return path, nil }

func (l *oneLoader) Inherit(string) (loaders.Loader, error) { return l, nil }

// hasSyntax reports whether s holds any Jinja syntax at all.
func hasSyntax(s string) bool {
	return strings.Contains(s, "{{") || strings.Contains(s, "{%") || strings.Contains(s, "{#")
}

// parseTemplate parses src; errors name the file, line and column.
func parseTemplate(file string, at position, src string) (tp *template, err error) {
	tp = &template{src: src, file: file, at: at}
	if !hasSyntax(src) {
		return tp, nil
	}
	defer func() {
		if v := recover(); v != nil {
			line, col := at.at(1, 1)
			tp, err = nil, &Error{File: file, Line: line, Col: col, Msg: fmt.Sprintf("template: %v", v)}
		}
	}()
	t, perr := exec.NewTemplate("script", templateConfig(), &oneLoader{name: "script", src: src}, templateEnv())
	if perr != nil {
		line, col := at.at(1, 1)
		msg := perr.Error()
		var se *parser.SyntaxError
		if errors.As(perr, &se) {
			msg = se.Message
			if se.Line > 0 {
				line, col = at.at(se.Line, max(se.Column, 1))
			}
		} else if i := strings.LastIndex(msg, src+"': "); strings.HasPrefix(msg, "failed to parse template '") && i >= 0 {
			msg = msg[i+len(src)+3:]
		}
		return nil, &Error{File: file, Line: line, Col: col, Msg: "template: " + msg}
	}
	tp.t = t
	return tp, nil
}

// render renders the template with vars. Errors name the file and the
// line where the text starts.
func (tp *template) render(vars map[string]any) (out string, err error) {
	if tp == nil {
		return "", nil
	}
	if tp.t == nil {
		return tp.src, nil
	}
	defer func() {
		if v := recover(); v != nil {
			out, err = "", tp.errorf("%v", v)
		}
	}()
	w := &limitWriter{limit: maxRendered}
	if err := tp.t.Execute(w, exec.NewContext(templateValues(vars))); err != nil {
		if errors.Is(err, errTooLong) {
			return "", tp.errorf("renders to more than %d bytes", maxRendered)
		}
		return "", tp.errorf("%s", strings.TrimPrefix(err.Error(), "unable to execute template: "))
	}
	return w.b.String(), nil
}

func (tp *template) errorf(format string, args ...any) error {
	line, col := tp.at.at(1, 1)
	return &Error{File: tp.file, Line: line, Col: col, Msg: "template: " + fmt.Sprintf(format, args...)}
}

var errTooLong = errors.New("rendered text too long")

type limitWriter struct {
	b     strings.Builder
	limit int
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.limit {
		return 0, errTooLong
	}
	return w.b.Write(p)
}

// templateValues prepares values for the template engine: whole numbers
// become ints, so 42 renders as "42", not "42.0".
func templateValues(vars map[string]any) map[string]any {
	out := make(map[string]any, len(vars))
	for k, v := range vars {
		out[k] = templateValue(v)
	}
	return out
}

func templateValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case map[string]any:
		return templateValues(x)
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = templateValue(e)
		}
		return l
	}
	return v
}

// runeCol converts a byte offset within a line to a 1-based rune column.
func runeCol(line string, off int) int {
	return utf8.RuneCountInString(line[:min(off, len(line))]) + 1
}
