package persona

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FileName is the file a persona folder must hold.
const FileName = "persona.md"

// Defaults of the known variables.
const (
	DefaultContextCount         = 40
	DefaultMiniFullContextCount = 6
)

//go:embed default
var defaultFiles embed.FS

// Persona is a loaded persona folder.
type Persona struct {
	Name, Description, Color string
	Dir                      string         // "" for the built-in persona
	Vars                     map[string]any // the front-matter variables with defaults applied, and agent_name = Name

	ContextCount, MiniFullContextCount int
	WorkMode                           bool
	Reference                          string // the few-shot style corpus ("" if none)
	// LorebookFile is the front-matter's lorebook (a character_book JSON
	// file in the folder, "" if none) and Lorebook its content, read with
	// the persona; package lorebook parses it.
	LorebookFile string
	Lorebook     []byte
	// Language is the language of the platform part of the prompt (one of
	// Languages; "en" unless the front-matter says language:).
	Language string
	// DepthPrompt is the front-matter's depth_prompt (a card's Character's
	// Note), nil if none: text put into the conversation Depth messages
	// before its end, as Role.
	DepthPrompt *DepthPrompt

	tmpl  *Template
	slots map[string]any // the front-matter's platform: slots
}

// Load loads the persona folder dir. Every file is read through an os.Root,
// so symbolic links that lead outside the folder are refused. Errors in the
// persona's files are *Error values naming file, line and column.
func Load(dir string) (*Persona, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("persona: open folder: %w", err)
	}
	defer root.Close()
	p, err := load(root.FS(), filepath.Join(dir, FileName))
	if err != nil {
		return nil, err
	}
	p.Dir = dir
	return p, nil
}

// Default returns the built-in persona, 青蓝.
func Default() (*Persona, error) {
	return load(DefaultFS(), "default/"+FileName)
}

// DefaultFS is the built-in persona's folder, read-only.
func DefaultFS() fs.FS {
	sub, err := fs.Sub(defaultFiles, "default")
	if err != nil {
		panic(err) // the embedded folder is part of the binary
	}
	return sub
}

// Render renders the root prompt — the persona's template inside the
// platform part (platform.go) — with the persona's variables, to which
// extra (for example channel, channel_kind or now) adds or overrides values.
func (p *Persona) Render(extra map[string]any) (string, error) {
	if p.tmpl == nil {
		return "", errors.New("persona: render: the persona was not made by Load or Default")
	}
	vars := maps.Clone(p.Vars)
	if vars == nil {
		vars = map[string]any{}
	}
	maps.Copy(vars, extra)
	return p.renderWithPlatform(vars)
}

// Own renders only the persona's own template (without the platform part
// and with its sections as written), for tools that show or export it.
func (p *Persona) Own(extra map[string]any) (string, error) {
	if p.tmpl == nil {
		return "", errors.New("persona: render: the persona was not made by Load or Default")
	}
	vars := maps.Clone(p.Vars)
	if vars == nil {
		vars = map[string]any{}
	}
	maps.Copy(vars, extra)
	return p.tmpl.Render(vars)
}

// load reads a persona from fsys; display names persona.md in errors.
func load(fsys fs.FS, display string) (*Persona, error) {
	data, err := readLimited(fsys, FileName)
	if err != nil {
		return nil, fmt.Errorf("persona: read %s: %w (a persona folder needs a %s)", display, err, FileName)
	}
	src := strings.TrimPrefix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\ufeff")
	front, body, bodyLine0, err := splitFrontMatter(display, src)
	if err != nil {
		return nil, err
	}
	p, ref, book, err := parseFrontMatter(display, front)
	if err != nil {
		return nil, err
	}
	if book.path != "" {
		data, err := readLimitedN(fsys, book.path, maxLorebookSize)
		if err != nil {
			return nil, &Error{File: display, Line: book.line, Col: book.col,
				Msg: fmt.Sprintf("lorebook: %v", err), Err: err}
		}
		p.LorebookFile, p.Lorebook = book.path, []byte(data)
	}
	if ref.path != "" {
		text, err := readLimited(fsys, ref.path)
		if err != nil {
			return nil, &Error{File: display, Line: ref.line, Col: ref.col,
				Msg: fmt.Sprintf("reference: %v", err), Err: err}
		}
		p.Reference = strings.TrimSuffix(text, "\n")
	}
	t, err := parse(display, body, bodyLine0)
	if err != nil {
		return nil, err
	}
	if err := t.ReadFiles(fsys); err != nil {
		return nil, err
	}
	p.tmpl = t
	return p, nil
}

// splitFrontMatter cuts src into the YAML between its first two "---" lines
// and the template after them, which starts after bodyLine0 lines.
func splitFrontMatter(display, src string) (front, body string, bodyLine0 int, err error) {
	lines := strings.SplitAfter(src, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return "", "", 0, &Error{File: display, Line: 1, Col: 1,
			Msg: "a persona starts with front-matter: a line \"---\", then at least \"name: …\", then \"---\""}
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t\n") == "---" {
			return strings.Join(lines[1:i], ""), strings.Join(lines[i+1:], ""), i + 1, nil
		}
	}
	return "", "", 0, &Error{File: display, Line: 1, Col: 1,
		Msg: "front-matter is not closed: add a line \"---\" after it"}
}

// place is a path named in the front-matter and where it was named.
type place struct {
	path      string
	line, col int
}

// frontMatter decodes one persona's front-matter; errors name its file and
// the key, with lines counted from the top of persona.md.
type frontMatter struct {
	display string
}

// at makes an error at node n; the front-matter starts on line 2 of the file.
func (f frontMatter) at(n *yaml.Node, format string, args ...any) *Error {
	return &Error{File: f.display, Line: n.Line + 1, Col: n.Column, Msg: fmt.Sprintf(format, args...)}
}

var (
	yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	colorRE    = regexp.MustCompile(`^(#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})|[A-Za-z]+)$`)
)

func parseFrontMatter(display, front string) (*Persona, place, place, error) {
	f := frontMatter{display: display}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		e := &Error{File: display, Line: 2, Msg: "front-matter: " + err.Error(), Err: err}
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			e.Line, e.Msg = n+1, "front-matter: "+m[2]
		}
		return nil, place{}, place{}, e
	}
	p := &Persona{}
	var ref, book place
	if len(doc.Content) == 0 {
		return nil, place{}, place{}, &Error{File: display, Line: 1, Col: 1, Msg: "name: missing: the front-matter must give the persona a name"}
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, place{}, place{}, f.at(m, "front-matter must be keys and values, like \"name: …\"")
	}
	var nameNode *yaml.Node
	vars := map[string]any{}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			return nil, place{}, place{}, f.at(k, "%s: given twice", k.Value)
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "name":
			nameNode = k
			p.Name, err = f.text(k.Value, v)
		case "description":
			p.Description, err = f.text(k.Value, v)
		case "color":
			p.Color, err = f.color(k, v)
		case "reference":
			ref.path, err = f.text(k.Value, v)
			if err == nil && ref.path != "" {
				ref.line, ref.col = v.Line+1, v.Column
				if ref.path, err = cleanPath(ref.path); err != nil {
					err = f.at(v, "reference: %v", err)
				}
			}
		case "lorebook":
			book.path, err = f.text(k.Value, v)
			if err == nil && book.path != "" {
				book.line, book.col = v.Line+1, v.Column
				if book.path, err = cleanPath(book.path); err != nil {
					err = f.at(v, "lorebook: %v", err)
				}
			}
		case "variables":
			err = f.variables(v, vars)
		case "language":
			p.Language, err = f.text(k.Value, v)
			if err == nil && !slices.Contains(Languages, p.Language) {
				err = f.at(v, "language: %q: the platform's rules are written in %s", p.Language, strings.Join(Languages, ", "))
			}
		case "platform":
			p.slots, err = f.slots(v)
		case "depth_prompt":
			p.DepthPrompt, err = f.depthPrompt(v)
		default:
			err = f.at(k, "unknown key %q: the keys are name, description, color, reference, lorebook, language, platform, depth_prompt and variables", k.Value)
		}
		if err != nil {
			return nil, place{}, place{}, err
		}
	}
	p.Name = strings.TrimSpace(p.Name)
	if p.Name == "" {
		n := m
		if nameNode != nil {
			n = nameNode
		}
		return nil, place{}, place{}, f.at(n, "name: missing: the front-matter must give the persona a name")
	}
	if err := f.counts(m, vars, p); err != nil {
		return nil, place{}, place{}, err
	}
	vars["agent_name"] = p.Name
	if _, ok := vars["user"]; !ok {
		vars["user"] = "user" // who the persona talks to; a turn passes the speaker
	}
	p.Vars = vars
	if p.Language == "" {
		p.Language = "en"
	}
	return p, ref, book, nil
}

// slots reads the platform: map of texts into the platform's slots.
func (f frontMatter) slots(m *yaml.Node) (map[string]any, error) {
	if m.Kind == yaml.ScalarNode && m.Tag == "!!null" {
		return nil, nil
	}
	if m.Kind != yaml.MappingNode {
		return nil, f.at(m, "platform: want a map of slots (%s) to text", strings.Join(Slots, ", "))
	}
	out := map[string]any{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if !slices.Contains(Slots, k.Value) {
			return nil, f.at(k, "platform.%s: not a slot; the platform's slots are %s (its rules cannot be removed)", k.Value, strings.Join(Slots, ", "))
		}
		t, err := f.text("platform."+k.Value, v)
		if err != nil {
			return nil, err
		}
		out[k.Value] = strings.TrimSpace(t)
	}
	return out, nil
}

// text reads a scalar as text; null is "".
func (f frontMatter) text(key string, v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode {
		return "", f.at(v, "%s: want text", key)
	}
	if v.Tag == "!!null" {
		return "", nil
	}
	return v.Value, nil
}

func (f frontMatter) color(k, v *yaml.Node) (string, error) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" && (k.LineComment != "" || v.LineComment != "") {
		return "", f.at(v, "color: quote the colour, color: \"#1D75B3\" (an unquoted # starts a YAML comment)")
	}
	c, err := f.text("color", v)
	if err != nil || c == "" {
		return c, err
	}
	if !colorRE.MatchString(c) {
		return "", f.at(v, "color: %q is not a colour: want \"#RRGGBB\" or a colour name", c)
	}
	return c, nil
}

// variables decodes the variables map into vars and checks the known names.
func (f frontMatter) variables(m *yaml.Node, vars map[string]any) error {
	if m.Kind == yaml.ScalarNode && m.Tag == "!!null" {
		return nil
	}
	if m.Kind != yaml.MappingNode {
		return f.at(m, "variables: want a map of names to values")
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := "variables." + k.Value
		if _, dup := vars[k.Value]; dup {
			return f.at(k, "%s: given twice", key)
		}
		if !isIdent(k.Value) {
			return f.at(k, "%s: a variable name holds letters, digits and _ and does not start with a digit", key)
		}
		var val any
		var err error
		switch k.Value {
		case "agent_name":
			return f.at(k, "%s: agent_name is always the persona's name; set name instead", key)
		case "context_count":
			val, err = f.count(key, v, 1)
		case "mini_full_context_count":
			val, err = f.count(key, v, 0)
		case "work_mode":
			var b bool
			if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
				return f.at(v, "%s: want true or false, got %q", key, v.Value)
			}
			val = b
		case "developer_name":
			val, err = f.text(key, v)
		case "supported_formats":
			val, err = f.list(key, v)
		default:
			val, err = f.value(key, v)
		}
		if err != nil {
			return err
		}
		vars[k.Value] = val
	}
	return nil
}

// count reads a whole number that is at least least.
func (f frontMatter) count(key string, v *yaml.Node, least int) (int, error) {
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil || n < least {
		return 0, f.at(v, "%s: want a whole number of %d or more, got %q", key, least, v.Value)
	}
	return n, nil
}

// list reads a list of texts; a single text is a list of one.
func (f frontMatter) list(key string, v *yaml.Node) ([]string, error) {
	if v.Kind == yaml.ScalarNode {
		if v.Tag == "!!null" {
			return nil, nil
		}
		return []string{v.Value}, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, f.at(v, "%s: want a list", key)
	}
	out := make([]string, 0, len(v.Content))
	for _, e := range v.Content {
		if e.Kind != yaml.ScalarNode {
			return nil, f.at(e, "%s: want a list of plain values", key)
		}
		out = append(out, e.Value)
	}
	return out, nil
}

// value reads a user variable: a plain value or a list of plain values.
func (f frontMatter) value(key string, v *yaml.Node) (any, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		var x any
		if err := v.Decode(&x); err != nil {
			return nil, f.at(v, "%s: %v", key, err)
		}
		return x, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(v.Content))
		for _, e := range v.Content {
			if e.Kind != yaml.ScalarNode {
				return nil, f.at(e, "%s: want a list of plain values", key)
			}
			var x any
			if err := e.Decode(&x); err != nil {
				return nil, f.at(e, "%s: %v", key, err)
			}
			out = append(out, x)
		}
		return out, nil
	}
	return nil, f.at(v, "%s: want a plain value or a list of them", key)
}

// counts applies the defaults of the known variables and checks that
// mini_full_context_count does not exceed context_count.
func (f frontMatter) counts(m *yaml.Node, vars map[string]any, p *Persona) error {
	if _, ok := vars["context_count"]; !ok {
		vars["context_count"] = DefaultContextCount
	}
	if _, ok := vars["mini_full_context_count"]; !ok {
		vars["mini_full_context_count"] = DefaultMiniFullContextCount
	}
	if _, ok := vars["work_mode"]; !ok {
		vars["work_mode"] = false
	}
	p.ContextCount = vars["context_count"].(int)
	p.MiniFullContextCount = vars["mini_full_context_count"].(int)
	p.WorkMode = vars["work_mode"].(bool)
	if p.MiniFullContextCount > p.ContextCount {
		n := findVar(m, "mini_full_context_count")
		if n == nil {
			n = findVar(m, "context_count")
		}
		if n == nil {
			n = m
		}
		return f.at(n, "variables.mini_full_context_count (%d) must not exceed context_count (%d)",
			p.MiniFullContextCount, p.ContextCount)
	}
	return nil
}

// findVar returns the value node of variables.name in the front-matter map m.
func findVar(m *yaml.Node, name string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != "variables" || m.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		vm := m.Content[i+1]
		for j := 0; j+1 < len(vm.Content); j += 2 {
			if vm.Content[j].Value == name {
				return vm.Content[j+1]
			}
		}
	}
	return nil
}

// DepthPrompt is text put into the conversation at a depth: SillyTavern's
// Character's Note (a card's extensions.depth_prompt).
type DepthPrompt struct {
	// Text is the note, a template like the root prompt's texts are not:
	// ${agent_name} and ${user} are replaced when it is put in.
	Text string
	// Depth counts messages from the conversation's end: 0 puts the note
	// after the last message, 4 before the last four.
	Depth int
	// Role is who the note speaks as: system, user or assistant.
	Role string
}

// MaxDepth bounds a depth_prompt's depth.
const MaxDepth = 1000

// depthPrompt reads depth_prompt: {text, depth, role}.
func (f frontMatter) depthPrompt(v *yaml.Node) (*DepthPrompt, error) {
	var raw struct {
		Text  string `yaml:"text"`
		Depth *int   `yaml:"depth"`
		Role  string `yaml:"role"`
	}
	if v.Kind != yaml.MappingNode {
		return nil, f.at(v, "depth_prompt: want {text: …, depth: 4, role: system}")
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		switch k := v.Content[i].Value; k {
		case "text", "depth", "role":
		default:
			return nil, f.at(v.Content[i], "depth_prompt: unknown key %q: the keys are text, depth and role", k)
		}
	}
	if err := v.Decode(&raw); err != nil {
		return nil, f.at(v, "depth_prompt: %v", err)
	}
	d := &DepthPrompt{Text: strings.TrimSpace(raw.Text), Depth: 4, Role: "system"}
	if raw.Depth != nil {
		d.Depth = *raw.Depth
	}
	if d.Depth < 0 || d.Depth > MaxDepth {
		return nil, f.at(v, "depth_prompt: depth %d: want 0 to %d messages from the end", d.Depth, MaxDepth)
	}
	switch raw.Role {
	case "":
	case "system", "user", "assistant":
		d.Role = raw.Role
	default:
		return nil, f.at(v, "depth_prompt: role %q: want system, user or assistant", raw.Role)
	}
	if d.Text == "" {
		return nil, nil
	}
	return d, nil
}
