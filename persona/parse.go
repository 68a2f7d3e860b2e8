package persona

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDepth bounds how deeply conditionals may nest.
const maxDepth = 32

type nodeKind uint8

const (
	kindText  nodeKind = iota
	kindVar            // ${name} or ${name = default}
	kindCond           // ${name ? a : b} or ${!name ? a : b}
	kindFile           // ${file_load(path)}
	kindColon          // a separator candidate, only while a branch is parsed
)

type node struct {
	kind       nodeKind
	text       string // text; the default of a variable; the path of file_load
	name       string // variable or condition name
	hasDefault bool
	negate     bool
	standalone bool   // a conditional alone on its source line(s)
	a, b       []node // the branches of a conditional
	line, col  int    // where "${" is
}

var errOpenBranch = errors.New("unterminated branch")

type parser struct {
	file  string
	src   string
	line0 int   // lines of the file before src
	lines []int // byte offsets at which lines of src start
}

func newParser(file, src string, line0 int) *parser {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	lines := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			lines = append(lines, i+1)
		}
	}
	return &parser{file: file, src: src, line0: line0, lines: lines}
}

// position turns a byte offset into a 1-based line and rune column.
func (p *parser) position(off int) (line, col int) {
	i := sort.Search(len(p.lines), func(i int) bool { return p.lines[i] > off }) - 1
	return p.line0 + i + 1, utf8.RuneCountInString(p.src[p.lines[i]:off]) + 1
}

func (p *parser) errorAt(off int, format string, args ...any) *Error {
	line, col := p.position(off)
	return &Error{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// seq parses template text from off. Inside a conditional's branches
// (inBranch) it stops after the '}' that closes the conditional, honours the
// \: and \} escapes and records each bare ':' as a separator candidate; it
// reports errOpenBranch when the text ends first.
func (p *parser) seq(off int, inBranch bool, depth int) ([]node, int, error) {
	s := p.src
	var nodes []node
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			nodes = append(nodes, node{kind: kindText, text: text.String()})
			text.Reset()
		}
	}
	for off < len(s) {
		c := s[off]
		switch {
		case c == '\\' && strings.HasPrefix(s[off+1:], "${"):
			text.WriteString("${")
			off += 3
		case c == '\\' && inBranch && off+1 < len(s) && (s[off+1] == ':' || s[off+1] == '}'):
			text.WriteByte(s[off+1])
			off += 2
		case c == '$' && off+1 < len(s) && s[off+1] == '{':
			flush()
			n, next, err := p.expr(off, depth)
			if err != nil {
				return nil, 0, err
			}
			nodes = append(nodes, n)
			off = next
		case inBranch && c == '}':
			flush()
			return nodes, off + 1, nil
		case inBranch && c == ':':
			flush()
			nodes = append(nodes, node{kind: kindColon})
			off++
		default:
			text.WriteByte(c)
			off++
		}
	}
	flush()
	if inBranch {
		return nil, off, errOpenBranch
	}
	return nodes, off, nil
}

// expr parses the expression whose "${" is at start and returns it with the
// offset just after its closing '}'.
func (p *parser) expr(start, depth int) (node, int, error) {
	s := p.src
	line, col := p.position(start)
	n := node{line: line, col: col}
	unterminated := func() (node, int, error) {
		return node{}, 0, p.errorAt(start, "unterminated ${: missing }")
	}
	off := skipSpace(s, start+2)
	if off >= len(s) {
		return unterminated()
	}
	if s[off] == '}' {
		return node{}, 0, p.errorAt(start, "empty expression ${}")
	}
	if s[off] == '!' {
		n.negate = true
		off = skipSpace(s, off+1)
	}
	name, end := identAt(s, off)
	if name == "" {
		if off >= len(s) {
			return unterminated()
		}
		bad := badWord(s[off:])
		if bad == "" {
			return node{}, 0, p.errorAt(start, "missing name after ${")
		}
		return node{}, 0, p.errorAt(start, "bad name %q: a name starts with a letter or _ and holds letters, digits and _", bad)
	}
	n.name = name
	off = skipSpace(s, end)
	if off >= len(s) {
		return unterminated()
	}
	if n.negate && s[off] != '?' {
		return node{}, 0, p.errorAt(start, "! only goes before the name of a conditional: ${!%s ? … : …}", name)
	}
	switch s[off] {
	case '}':
		n.kind = kindVar
		return n, off + 1, nil
	case '=':
		return p.defaultValue(n, start, off+1)
	case '?':
		if depth >= maxDepth {
			return node{}, 0, p.errorAt(start, "conditionals nested more than %d deep", maxDepth)
		}
		body, next, err := p.seq(off+1, true, depth+1)
		if errors.Is(err, errOpenBranch) {
			return unterminated()
		}
		if err != nil {
			return node{}, 0, err
		}
		n.kind = kindCond
		a, b := splitBranches(body)
		n.a, n.b = shape(a), shape(b)
		n.standalone = aloneOnLine(s, start, next)
		return n, next, nil
	case '(':
		if name != "file_load" {
			return node{}, 0, p.errorAt(start, "unknown function %q: the only function is file_load", name)
		}
		return p.fileLoad(n, start, off+1)
	}
	r, _ := utf8.DecodeRuneInString(s[off:])
	return node{}, 0, p.errorAt(start, "unexpected %q after %q: want }, = default, ? conditional or file_load(path)", r, name)
}

// defaultValue parses the literal default of ${name = default} from off,
// where \} stands for '}'.
func (p *parser) defaultValue(n node, start, off int) (node, int, error) {
	s := p.src
	var b strings.Builder
	for off < len(s) {
		switch {
		case s[off] == '\\' && off+1 < len(s) && s[off+1] == '}':
			b.WriteByte('}')
			off += 2
		case s[off] == '}':
			n.kind = kindVar
			n.hasDefault = true
			n.text = strings.TrimSpace(b.String())
			return n, off + 1, nil
		default:
			b.WriteByte(s[off])
			off++
		}
	}
	return node{}, 0, p.errorAt(start, "unterminated ${: missing }")
}

// fileLoad parses the rest of ${file_load(path)} from off, just after '('.
func (p *parser) fileLoad(n node, start, off int) (node, int, error) {
	s := p.src
	end := strings.IndexAny(s[off:], ")}\n")
	if end < 0 || s[off+end] != ')' {
		return node{}, 0, p.errorAt(start, "file_load: missing ) after the path")
	}
	arg := strings.TrimSpace(s[off : off+end])
	if len(arg) >= 2 && (arg[0] == '"' || arg[0] == '\'') && arg[len(arg)-1] == arg[0] {
		arg = strings.TrimSpace(arg[1 : len(arg)-1])
	}
	if arg == "" {
		return node{}, 0, p.errorAt(start, "file_load needs a path: ${file_load(notes.md)}")
	}
	clean, err := cleanPath(arg)
	if err != nil {
		return node{}, 0, p.errorAt(start, "file_load refused: %v", err)
	}
	off = skipSpace(s, off+end+1)
	if off >= len(s) {
		return node{}, 0, p.errorAt(start, "unterminated ${: missing }")
	}
	if s[off] != '}' {
		r, _ := utf8.DecodeRuneInString(s[off:])
		return node{}, 0, p.errorAt(start, "unexpected %q after file_load(%s): want }", r, arg)
	}
	n.kind = kindFile
	n.text = clean
	return n, off + 1, nil
}

func skipSpace(s string, off int) int {
	for off < len(s) {
		r, size := utf8.DecodeRuneInString(s[off:])
		if !unicode.IsSpace(r) {
			break
		}
		off += size
	}
	return off
}

// identAt returns the name that starts at off (letters, digits and '_', not
// starting with a digit) and the offset after it.
func identAt(s string, off int) (string, int) {
	i := off
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '_' || unicode.IsLetter(r) || (i > off && unicode.IsDigit(r)) {
			i += size
			continue
		}
		break
	}
	return s[off:i], i
}

// isIdent reports whether s is a whole name usable in a template.
func isIdent(s string) bool {
	name, end := identAt(s, 0)
	return name != "" && end == len(s)
}

// badWord returns the run of characters that stands where a name should.
func badWord(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("}?=(", r)
	})
	if end < 0 {
		end = len(s)
	}
	if end > 40 {
		_, size := utf8.DecodeRuneInString(s[40:])
		end = 40 + size
	}
	return s[:end]
}

// aloneOnLine reports whether the expression s[start:end] has only blanks
// before it on its first line and after it on its last.
func aloneOnLine(s string, start, end int) bool {
	i := start
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	if i > 0 && s[i-1] != '\n' {
		return false
	}
	j := end
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return j == len(s) || s[j] == '\n'
}

// splitBranches divides a conditional's parsed body at its separator: the
// first line that holds only ':' if there is one, else the first bare ':'.
// Every other ':' is literal text.
func splitBranches(body []node) (a, b []node) {
	sep := -1
	for i := range body {
		if body[i].kind == kindColon && colonAlone(body, i) {
			sep = i
			break
		}
	}
	if sep < 0 {
		sep = slices.IndexFunc(body, func(n node) bool { return n.kind == kindColon })
	}
	if sep < 0 {
		return literalColons(body), nil
	}
	return literalColons(body[:sep]), literalColons(body[sep+1:])
}

// colonAlone reports whether the colon body[i] is alone on its line.
func colonAlone(body []node, i int) bool {
	if i == 0 || i == len(body)-1 || body[i-1].kind != kindText || body[i+1].kind != kindText {
		return false
	}
	before, after := body[i-1].text, body[i+1].text
	k := strings.LastIndexByte(before, '\n')
	m := strings.IndexByte(after, '\n')
	return k >= 0 && m >= 0 && isBlank(before[k+1:]) && isBlank(after[:m])
}

// literalColons turns separator candidates into text and merges neighbouring
// text nodes.
func literalColons(ns []node) []node {
	var out []node
	for _, n := range ns {
		if n.kind == kindColon {
			n = node{kind: kindText, text: ":"}
		}
		if n.kind == kindText && len(out) > 0 && out[len(out)-1].kind == kindText {
			out[len(out)-1].text += n.text
			continue
		}
		out = append(out, n)
	}
	return out
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// shape trims a branch of surrounding blank space and removes the
// indentation its lines share, so the branch can be re-indented where it is
// rendered. Blank lines inside lose their trailing blanks.
func shape(ns []node) []node {
	if len(ns) == 0 {
		return nil
	}
	ns = slices.Clone(ns)
	firstIndent, hasFirst := "", false
	if ns[0].kind == kindText {
		t := ns[0].text
		rest := strings.TrimLeftFunc(t, unicode.IsSpace)
		lead := t[:len(t)-len(rest)]
		if k := strings.LastIndexByte(lead, '\n'); k >= 0 {
			firstIndent, hasFirst = lead[k+1:], true
		}
		ns[0].text = rest
	}
	last := &ns[len(ns)-1]
	if last.kind == kindText {
		last.text = strings.TrimRightFunc(last.text, unicode.IsSpace)
	}
	ns = slices.DeleteFunc(ns, func(n node) bool { return n.kind == kindText && n.text == "" })
	if len(ns) == 0 {
		return nil
	}

	// The indentation every non-blank line shares.
	var common string
	seen := false
	share := func(ind string) {
		if !seen {
			common, seen = ind, true
			return
		}
		i := 0
		for i < len(common) && i < len(ind) && common[i] == ind[i] {
			i++
		}
		common = common[:i]
	}
	if hasFirst {
		share(firstIndent)
	}
	for i, n := range ns {
		if n.kind != kindText {
			continue
		}
		for k := 0; k < len(n.text); k++ {
			if n.text[k] != '\n' {
				continue
			}
			ind := indentAt(n.text, k+1)
			after := k + 1 + len(ind)
			if after < len(n.text) && n.text[after] == '\n' || after == len(n.text) && i == len(ns)-1 {
				continue // a blank line
			}
			share(ind)
		}
	}

	for i := range ns {
		if ns[i].kind == kindText {
			ns[i].text = dedent(ns[i].text, len(common))
		}
	}
	if hasFirst && len(firstIndent) > len(common) {
		extra := firstIndent[len(common):]
		if ns[0].kind == kindText {
			ns[0].text = extra + ns[0].text
		} else {
			ns = slices.Insert(ns, 0, node{kind: kindText, text: extra})
		}
	}
	return ns
}

// indentAt returns the run of spaces and tabs at s[off:].
func indentAt(s string, off int) string {
	end := off
	for end < len(s) && (s[end] == ' ' || s[end] == '\t') {
		end++
	}
	return s[off:end]
}

// dedent removes n bytes of indentation after every newline of s, and all of
// it from lines that are blank.
func dedent(s string, n int) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	var b strings.Builder
	for k := 0; k < len(s); k++ {
		b.WriteByte(s[k])
		if s[k] != '\n' {
			continue
		}
		ind := indentAt(s, k+1)
		after := k + 1 + len(ind)
		if after < len(s) && s[after] == '\n' {
			k += len(ind) // blank line: drop its blanks
			continue
		}
		k += min(n, len(ind))
	}
	return b.String()
}
