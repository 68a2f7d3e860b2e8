package script

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cyan-agent/cyan/generate"
)

// decl is one file as written, before extends is applied. Pointer fields
// are nil when the file does not set them.
type decl struct {
	file  string
	lines []string

	name, title, description *string
	inputs                   []inputDecl
	output                   map[string]any
	outputAt                 place
	params                   map[string]any
	gen                      genDecl
	use                      []useDecl
	useSet                   bool
	extends                  string
	extendsAt                place

	system   []systemPart
	messages []message
	warnings []string
}

// place is a position in a file, for errors.
type place struct {
	file      string
	line, col int
}

func (p place) errorf(format string, args ...any) *Error {
	return &Error{File: p.file, Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)}
}

type inputDecl struct {
	at          place
	name        string
	required    *bool
	def         any
	hasDefault  bool
	typ         *string
	enum        []any
	description *string
	examples    []any
}

type genDecl struct {
	attempts    *int
	strict      *bool
	think       *generate.Think
	debug       *bool
	maxOutput   *int
	temperature *float64
}

type useDecl struct {
	at                  place
	source, label       string
	budget              int
	budgetSet, labelSet bool
}

// systemPart is one system message: plain text is its content.
type systemPart struct {
	at                  place
	background, content *template
	notes               []*template
}

// message is a user or assistant message. An assistant message may hold a
// generation site: its text is then Before + [[site]] + After.
type message struct {
	at    place
	role  string // "user" or "assistant"
	text  *template
	site  *site
	after *template
}

// site is a generation site: [[NAME]] or [[NAME:|a|b|c]].
type site struct {
	at      place
	name    string
	choices []string
	implied bool // the [[RESPONSE]] a script without sites ends with
}

// Known front-matter keys.
var frontKeys = []string{"name", "title", "description", "input", "output", "parameters", "generate", "use", "extends"}

// splitFile cuts a script into its front-matter and body. The front-matter
// is optional; when present it sits between a first line "---" and the
// next "---" line. bodyLine0 is the number of lines before the body.
func splitFile(file, src string) (front, body string, frontLine0, bodyLine0 int, err error) {
	lines := strings.SplitAfter(src, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t\r\n") != "---" {
		return "", src, 0, 0, nil
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t\r\n") == "---" {
			return strings.Join(lines[1:i], ""), strings.Join(lines[i+1:], ""), 1, i + 1, nil
		}
	}
	return "", "", 0, 0, &Error{File: file, Line: 1, Col: 1, Msg: "the front-matter is not closed: add a line \"---\" after it"}
}

// parseDecl reads one file.
func parseDecl(file string, data []byte) (*decl, error) {
	// Line breaks are "\n", "\r\n" or a lone "\r", for YAML and for us.
	src := strings.TrimPrefix(strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n"), "\ufeff")
	d := &decl{file: file, lines: strings.Split(src, "\n")}
	front, body, frontLine0, bodyLine0, err := splitFile(file, src)
	if err != nil {
		return nil, err
	}
	var errs []error
	if strings.TrimSpace(front) != "" {
		n, err := parseYAML(file, front, frontLine0)
		if err != nil {
			return nil, err
		}
		errs = append(errs, d.unsupportedTags(n, frontLine0)...)
		errs = append(errs, d.frontMatter(n, frontLine0)...)
	}
	errs = append(errs, d.body(body, bodyLine0)...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return d, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAML parses one YAML document; errors name the file line.
func parseYAML(file, text string, line0 int) (*yaml.Node, error) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		msg := err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return nil, &Error{File: file, Line: n + line0, Msg: m[2]}
		}
		return nil, &Error{File: file, Line: line0 + 1, Msg: strings.TrimPrefix(msg, "yaml: ")}
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		return nil, &Error{File: file, Line: next.Line + line0, Msg: "a script holds one dialogue: remove this \"---\" (and put what follows in the same list of messages)"}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

func (d *decl) at(n *yaml.Node, line0 int) place {
	return place{file: d.file, line: n.Line + line0, col: n.Column}
}

// frontMatter decodes the front-matter mapping.
func (d *decl) frontMatter(n *yaml.Node, line0 int) []error {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return []error{d.at(n, line0).errorf("the front-matter must be a mapping of keys (name:, input:, output:, …)")}
	}
	var errs []error
	bad := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, d.at(n, line0).errorf(format, args...))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			bad(k, "%s is set twice", k.Value)
			continue
		}
		seen[k.Value] = true
		switch k.Value {
		case "name", "title", "description", "extends":
			s, ok := scalarString(v)
			if !ok {
				bad(v, "%s must be text", k.Value)
				continue
			}
			switch k.Value {
			case "name":
				if !validName(s) {
					bad(v, "name %q must start with a letter and hold only letters, digits, '_' and '-'", s)
				}
				d.name = &s
			case "title":
				if strings.Contains(s, "\n") {
					bad(v, "the title is one line; put longer text in description")
				}
				d.title = &s
			case "description":
				d.description = &s
			case "extends":
				d.extends, d.extendsAt = strings.TrimSpace(s), d.at(v, line0)
				if d.extends == "" {
					bad(v, "extends names a script (a name such as \"compress\" or a file such as \"base.ai.yaml\")")
				}
			}
		case "input":
			errs = append(errs, d.inputList(v, line0)...)
		case "output":
			m, err := jsonOf(v)
			obj, ok := m.(map[string]any)
			if err != nil || !ok {
				bad(v, "output must be a JSON Schema object, such as {type: object, properties: {…}}")
				continue
			}
			d.output, d.outputAt = obj, d.at(v, line0)
			if _, err := generate.CompileShape(mustJSON(obj), false); err != nil {
				bad(v, "output: %v", err)
			}
		case "parameters":
			m, err := jsonOf(v)
			obj, ok := m.(map[string]any)
			if err != nil || !ok {
				bad(v, "parameters must be a mapping (temperature:, max_tokens:, …)")
				continue
			}
			d.params = obj
			errs = append(errs, d.parameters(v, line0)...)
		case "generate":
			errs = append(errs, d.generateBlock(v, line0)...)
		case "use":
			errs = append(errs, d.useList(v, line0)...)
		default:
			if what, ok := isdkFrontKeys[k.Value]; ok {
				bad(k, "%s is ISDK's (%s) and not supported here; the front-matter knows %s", k.Value, what, strings.Join(frontKeys, ", "))
				continue
			}
			bad(k, "unknown key %q; the front-matter knows %s", k.Value, strings.Join(frontKeys, ", "))
		}
	}
	return errs
}

var namePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

func validName(s string) bool { return namePattern.MatchString(s) }

// identPattern is a name a template can use: an input or a site.
var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

func scalarString(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", false
	}
	return n.Value, true
}

// jsonOf decodes a YAML node into JSON-compatible values.
func jsonOf(n *yaml.Node) (any, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return normalizeYAML(v)
}

// normalizeYAML turns map[any]any-free YAML values into JSON ones; a
// mapping key must be text.
func normalizeYAML(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			n, err := normalizeYAML(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
		return x, nil
	case map[any]any:
		return nil, errors.New("mapping keys must be text")
	case []any:
		for i, e := range x {
			n, err := normalizeYAML(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
		return x, nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case float64, string, bool, nil:
		return x, nil
	}
	return fmt.Sprint(v), nil
}

// Input types a declaration may name.
var inputTypes = []string{"string", "number", "integer", "boolean", "object", "array"}

// inputList reads input: a list of names or {name: {…}} items (or one
// mapping of names).
func (d *decl) inputList(n *yaml.Node, line0 int) []error {
	var errs []error
	seen := map[string]bool{}
	add := func(k, spec *yaml.Node) {
		in := inputDecl{at: d.at(k, line0), name: k.Value}
		if !identPattern.MatchString(in.name) {
			errs = append(errs, in.at.errorf("input name %q must start with a letter or '_' and hold only letters, digits and '_'", in.name))
			return
		}
		if seen[in.name] {
			errs = append(errs, in.at.errorf("input %q is declared twice", in.name))
			return
		}
		seen[in.name] = true
		if spec != nil && spec.Tag != "!!null" {
			errs = append(errs, d.inputSpec(&in, spec, line0)...)
		}
		d.inputs = append(d.inputs, in)
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, item := range n.Content {
			switch {
			case item.Kind == yaml.ScalarNode:
				add(item, nil)
			case item.Kind == yaml.MappingNode && len(item.Content) == 2:
				add(item.Content[0], item.Content[1])
			default:
				errs = append(errs, d.at(item, line0).errorf("an input is a name, or a name with its settings: - text: {required: true}"))
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			add(n.Content[i], n.Content[i+1])
		}
	default:
		errs = append(errs, d.at(n, line0).errorf("input is a list of names, or of names with settings"))
	}
	return errs
}

var inputFields = []string{"required", "default", "type", "enum", "description", "examples", "example"}

func (d *decl) inputSpec(in *inputDecl, spec *yaml.Node, line0 int) []error {
	if spec.Kind != yaml.MappingNode {
		return []error{d.at(spec, line0).errorf("the settings of input %q are a mapping: {required: true, type: string, …}", in.name)}
	}
	var errs []error
	bad := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, d.at(n, line0).errorf(format, args...))
	}
	for i := 0; i+1 < len(spec.Content); i += 2 {
		k, v := spec.Content[i], spec.Content[i+1]
		switch k.Value {
		case "required":
			var b bool
			if v.Decode(&b) != nil {
				bad(v, "required is true or false")
				continue
			}
			in.required = &b
		case "default":
			val, err := jsonOf(v)
			if err != nil {
				bad(v, "default: %v", err)
				continue
			}
			in.def, in.hasDefault = val, true
		case "type":
			s, _ := scalarString(v)
			if !slices.Contains(inputTypes, s) {
				bad(v, "type %q is not one of %s", v.Value, strings.Join(inputTypes, ", "))
				continue
			}
			in.typ = &s
		case "enum":
			val, err := jsonOf(v)
			list, ok := val.([]any)
			if err != nil || !ok || len(list) == 0 {
				bad(v, "enum is a list of the allowed values")
				continue
			}
			in.enum = list
		case "description":
			s, ok := scalarString(v)
			if !ok {
				bad(v, "description must be text")
				continue
			}
			in.description = &s
		case "examples", "example":
			val, err := jsonOf(v)
			if err != nil {
				bad(v, "%s: %v", k.Value, err)
				continue
			}
			if list, ok := val.([]any); ok && k.Value == "examples" {
				in.examples = list
			} else {
				in.examples = []any{val}
			}
		default:
			bad(k, "unknown input setting %q; an input knows %s", k.Value, strings.Join(inputFields, ", "))
		}
	}
	return errs
}

// Parameters the provider layer passes on; the rest are ISDK's or the
// author's own and are ignored with a warning.
var knownParams = []string{"temperature", "max_tokens"}

func (d *decl) parameters(n *yaml.Node, line0 int) []error {
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "temperature":
			var f float64
			if v.Decode(&f) != nil || f < 0 || f > 2 {
				errs = append(errs, d.at(v, line0).errorf("temperature is a number from 0 to 2"))
				continue
			}
			if d.gen.temperature == nil {
				d.gen.temperature = &f
			}
		case "max_tokens":
			var m int
			if v.Decode(&m) != nil || m <= 0 {
				errs = append(errs, d.at(v, line0).errorf("max_tokens is a positive number of tokens"))
				continue
			}
			if d.gen.maxOutput == nil {
				d.gen.maxOutput = &m
			}
		default:
			p := d.at(k, line0)
			d.warnings = append(d.warnings, fmt.Sprintf("%s:%d:%d: parameter %q is not supported and is ignored (supported: %s)",
				p.file, p.line, p.col, k.Value, strings.Join(knownParams, ", ")))
		}
	}
	return errs
}

var generateKeys = []string{"attempts", "strict", "think", "debug", "max_output", "temperature"}

// generateBlock reads generate: the runtime behaviour of every site.
func (d *decl) generateBlock(n *yaml.Node, line0 int) []error {
	if n.Kind != yaml.MappingNode {
		return []error{d.at(n, line0).errorf("generate is a mapping: {attempts: 2, strict: false, think: false}")}
	}
	var errs []error
	bad := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, d.at(n, line0).errorf(format, args...))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "attempts":
			var a int
			if v.Decode(&a) != nil || a < 1 || a > generate.MaxAttempts {
				bad(v, "attempts is a number from 1 to %d", generate.MaxAttempts)
				continue
			}
			d.gen.attempts = &a
		case "strict", "debug":
			var b bool
			if v.Decode(&b) != nil {
				bad(v, "%s is true or false", k.Value)
				continue
			}
			if k.Value == "strict" {
				d.gen.strict = &b
			} else {
				d.gen.debug = &b
			}
		case "think":
			var raw any
			_ = v.Decode(&raw)
			t, err := generate.ParseThink(raw)
			if err != nil {
				bad(v, "%v", err)
				continue
			}
			d.gen.think = &t
		case "max_output":
			var m int
			if v.Decode(&m) != nil || m <= 0 {
				bad(v, "max_output is a positive number of tokens")
				continue
			}
			d.gen.maxOutput = &m
		case "temperature":
			var f float64
			if v.Decode(&f) != nil || f < 0 || f > 2 {
				bad(v, "temperature is a number from 0 to 2")
				continue
			}
			d.gen.temperature = &f
		default:
			bad(k, "unknown generate setting %q; generate knows %s", k.Value, strings.Join(generateKeys, ", "))
		}
	}
	return errs
}

// useList reads use: the context items, [{source, label, budget}].
func (d *decl) useList(n *yaml.Node, line0 int) []error {
	d.useSet = true
	if n.Kind != yaml.SequenceNode {
		return []error{d.at(n, line0).errorf("use is a list: - {source: text, label: message, budget: 2000}")}
	}
	var errs []error
	for _, item := range n.Content {
		u := useDecl{at: d.at(item, line0)}
		if item.Kind == yaml.ScalarNode {
			u.source = item.Value
		} else if item.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(item.Content); i += 2 {
				k, v := item.Content[i], item.Content[i+1]
				switch k.Value {
				case "source":
					u.source = v.Value
				case "label":
					u.label, u.labelSet = v.Value, true
					if err := generate.CheckLabel(v.Value); err != nil {
						errs = append(errs, d.at(v, line0).errorf("%v", err))
					}
				case "budget":
					b, err := parseBudget(v.Value)
					if err != nil {
						errs = append(errs, d.at(v, line0).errorf("budget: %v", err))
					}
					u.budget, u.budgetSet = b, true
				default:
					errs = append(errs, d.at(k, line0).errorf("unknown use setting %q; an item knows source, label, budget", k.Value))
				}
			}
		} else {
			errs = append(errs, u.at.errorf("a use item is {source: …, label: …, budget: …}"))
			continue
		}
		if strings.TrimSpace(u.source) == "" {
			errs = append(errs, u.at.errorf("a use item needs a source: an input's name (or a path into it, such as message.text)"))
			continue
		}
		d.use = append(d.use, u)
	}
	return errs
}

// parseBudget reads a token budget: 2000, "2k" or "1.5k".
func parseBudget(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	if strings.HasSuffix(t, "k") {
		t, mult = strings.TrimSuffix(t, "k"), 1000
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f <= 0 || f*mult > 1<<30 {
		return 0, fmt.Errorf("%q is not a number of tokens (2000, or 2k)", s)
	}
	return int(f * mult), nil
}
