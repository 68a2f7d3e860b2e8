package script

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/cyan-agent/cyan/generate"
)

// Script is a prompt script, ready to run: its file and the files it
// extends merged, its templates parsed and its sites found.
type Script struct {
	Name        string
	Title       string
	Description string
	// File is the script's own file; Files are every file it was built
	// from, itself first, then what it extends.
	File  string
	Files []string
	// Inputs are the declared inputs, in order.
	Inputs []Input
	// Output is the declared output's JSON Schema (nil: none).
	Output json.RawMessage
	// Warnings are things the script asks for that are ignored.
	Warnings []string

	system   []systemPart
	messages []message
	use      []useDecl
	gen      genDecl
	output   *generate.Shape // Output compiled (lax, or strict when generate.strict is set)
	inShapes map[string]*generate.Shape
}

// Input is a declared input.
type Input struct {
	Name        string `json:"name"`
	Required    bool   `json:"required,omitempty"`
	Default     any    `json:"default,omitempty"`
	HasDefault  bool   `json:"-"`
	Type        string `json:"type,omitempty"` // "": any JSON value
	Enum        []any  `json:"enum,omitempty"`
	Description string `json:"description,omitempty"`
	Examples    []any  `json:"examples,omitempty"`
}

// Sites lists the names of the generation sites, in order.
func (s *Script) Sites() []string {
	var out []string
	for _, m := range s.messages {
		if m.site != nil {
			out = append(out, m.site.name)
		}
	}
	return out
}

// merge applies a child file over the parent it extends: front-matter
// deep-merged (the child wins; inputs merge by name), system messages
// merged in order, the child's messages appended.
func merge(parent, child *decl) *decl {
	out := *child
	out.name = child.name
	out.title = pick(child.title, parent.title)
	out.description = pick(child.description, parent.description)
	out.output = deepMerge(parent.output, child.output)
	if child.output == nil {
		out.outputAt = parent.outputAt
	}
	out.gen = genDecl{
		attempts:    pick(child.gen.attempts, parent.gen.attempts),
		strict:      pick(child.gen.strict, parent.gen.strict),
		think:       pick(child.gen.think, parent.gen.think),
		debug:       pick(child.gen.debug, parent.gen.debug),
		maxOutput:   pick(child.gen.maxOutput, parent.gen.maxOutput),
		temperature: pick(child.gen.temperature, parent.gen.temperature),
	}
	if !child.useSet {
		out.use, out.useSet = parent.use, parent.useSet
	}
	out.inputs = slices.Clone(parent.inputs)
	for _, in := range child.inputs {
		i := slices.IndexFunc(out.inputs, func(p inputDecl) bool { return p.name == in.name })
		if i < 0 {
			out.inputs = append(out.inputs, in)
			continue
		}
		p := out.inputs[i]
		p.at = in.at
		p.required = pick(in.required, p.required)
		p.typ = pick(in.typ, p.typ)
		p.description = pick(in.description, p.description)
		if in.hasDefault {
			p.def, p.hasDefault = in.def, true
		}
		if in.enum != nil {
			p.enum = in.enum
		}
		if in.examples != nil {
			p.examples = in.examples
		}
		out.inputs[i] = p
	}
	out.system = append(slices.Clone(parent.system), child.system...)
	out.messages = append(slices.Clone(parent.messages), child.messages...)
	out.warnings = append(slices.Clone(parent.warnings), child.warnings...)
	return &out
}

func pick[T any](child, parent *T) *T {
	if child != nil {
		return child
	}
	return parent
}

// deepMerge merges b over a: mappings merge key by key, anything else in b
// replaces a's.
func deepMerge(a, b map[string]any) map[string]any {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := maps.Clone(a)
	for k, bv := range b {
		am, aok := out[k].(map[string]any)
		bm, bok := bv.(map[string]any)
		if aok && bok {
			out[k] = deepMerge(am, bm)
		} else {
			out[k] = bv
		}
	}
	return out
}

// ImpliedSite names the site a script without one ends with.
const ImpliedSite = "RESPONSE"

// build checks a merged declaration and makes the Script.
func build(d *decl, files []string) (*Script, error) {
	s := &Script{File: d.file, Files: files, Warnings: d.warnings, system: d.system, use: d.use, gen: d.gen}
	s.Name = strings.TrimSuffix(strings.TrimSuffix(path.Base(strings.ReplaceAll(d.file, `\`, "/")), ".yaml"), ".ai")
	if d.name != nil {
		s.Name = *d.name
	}
	if d.title != nil {
		s.Title = *d.title
	}
	if d.description != nil {
		s.Description = *d.description
	}
	top := place{file: d.file, line: 1, col: 1}
	if err := s.buildInputs(d.inputs); err != nil {
		return nil, err
	}
	if d.output != nil {
		s.Output = mustJSON(d.output)
		sh, err := generate.CompileShape(s.Output, d.gen.strict != nil && *d.gen.strict)
		if err != nil {
			return nil, d.outputAt.errorf("output: %v", err)
		}
		s.output = sh
	}

	s.messages = slices.Clone(d.messages)
	if len(s.messages) == 0 {
		return nil, top.errorf("the script has no messages: add at least one line \"user: …\" after the front-matter")
	}
	seen := map[string]place{}
	for i, m := range s.messages {
		if m.site == nil {
			continue
		}
		if prev, dup := seen[m.site.name]; dup {
			return nil, m.site.at.errorf("the site [[%s]] is already defined at %s:%d", m.site.name, prev.file, prev.line)
		}
		if slices.ContainsFunc(s.Inputs, func(in Input) bool { return in.Name == m.site.name }) {
			return nil, m.site.at.errorf("the site [[%s]] has the name of an input; rename one of them", m.site.name)
		}
		seen[m.site.name] = m.site.at
		if i == 0 || s.messages[i-1].role != "user" {
			return nil, m.site.at.errorf("the site [[%s]] must follow a user message: that message is the instruction it answers", m.site.name)
		}
	}
	last := s.messages[len(s.messages)-1]
	switch {
	case len(seen) == 0 && last.role != "user":
		return nil, last.at.errorf("nothing to generate: end the script with a user message, or put [[NAME]] in an assistant message")
	case last.role == "user":
		// A user message after the last site is run, as ISDK runs $AI at
		// a script's end: its answer is the script's value.
		if prev, dup := seen[ImpliedSite]; dup {
			return nil, last.at.errorf("this user message after the last site would be answered as [[%s]], which %s:%d already defines; end the script with an assistant message \"[[NAME]]\"", ImpliedSite, prev.file, prev.line)
		}
		s.messages = append(s.messages, message{at: last.at, role: "assistant", site: &site{at: last.at, name: ImpliedSite, implied: true}})
	}
	for _, u := range s.use {
		root, _, _ := strings.Cut(u.source, ".")
		if len(s.Inputs) > 0 && !slices.ContainsFunc(s.Inputs, func(in Input) bool { return in.Name == root }) {
			return nil, u.at.errorf("use: the source %q is not an input; the script takes %s", u.source, s.inputNames())
		}
	}
	return s, nil
}

func (s *Script) inputNames() string {
	if len(s.Inputs) == 0 {
		return "no inputs"
	}
	var names []string
	for _, in := range s.Inputs {
		names = append(names, in.Name)
	}
	return strings.Join(names, ", ")
}

// buildInputs makes the Inputs and compiles one shape per input, so a
// wrong value is reported under its own name; a default must pass it.
func (s *Script) buildInputs(decls []inputDecl) error {
	s.inShapes = map[string]*generate.Shape{}
	for _, d := range decls {
		in := Input{Name: d.name, Default: d.def, HasDefault: d.hasDefault, Enum: d.enum, Examples: d.examples}
		if d.required != nil {
			in.Required = *d.required
		}
		if d.typ != nil {
			in.Type = *d.typ
		}
		if d.description != nil {
			in.Description = *d.description
		}
		sh, err := generate.CompileShape(mustJSON(in.schema()), false)
		if err != nil {
			return d.at.errorf("input %q: %v", d.name, err)
		}
		if in.HasDefault && in.Default != nil {
			if _, _, err := sh.Check(in.Default); err != nil {
				return d.at.errorf("input %q: the default does not fit: %v", d.name, strings.TrimPrefix(err.Error(), "at /: "))
			}
		}
		s.inShapes[d.name] = sh
		s.Inputs = append(s.Inputs, in)
	}
	return nil
}

// schema is the JSON Schema of one input's value.
func (in Input) schema() map[string]any {
	m := map[string]any{}
	if in.Type != "" {
		m["type"] = in.Type
	}
	if in.Enum != nil {
		m["enum"] = in.Enum
	}
	if in.Description != "" {
		m["description"] = in.Description
	}
	if in.HasDefault {
		m["default"] = in.Default
	}
	if in.Examples != nil {
		m["examples"] = in.Examples
	}
	return m
}

// InputSchema is the JSON Schema of the script's inputs, as a tool's
// parameters: an object with one property per input. A script that
// declares no inputs takes any object.
func (s *Script) InputSchema() json.RawMessage {
	props := map[string]any{}
	var required []string
	for _, in := range s.Inputs {
		props[in.Name] = in.schema()
		if in.Required && !in.HasDefault {
			required = append(required, in.Name)
		}
	}
	sch := map[string]any{"type": "object", "properties": props}
	if len(s.Inputs) > 0 {
		sch["additionalProperties"] = false
	}
	if len(required) > 0 {
		sch["required"] = required
	}
	return mustJSON(sch)
}

// CheckInputs checks inputs against the declaration before any call: every
// required input is there, each value fits its type and enum (text such as
// "42" is taken for a number, as in generate's lax mode), and, when the
// script declares inputs, no other is given. Defaults fill what is
// missing; a declared input given no value and no default is null. The
// error is an *InputError naming the input.
func (s *Script) CheckInputs(in map[string]any) (map[string]any, error) {
	out := map[string]any{}
	if len(s.Inputs) == 0 {
		for k, v := range in {
			pv, err := plainValue(v)
			if err != nil {
				return nil, &InputError{Script: s.Name, Input: k, Msg: "is not a JSON value: " + err.Error()}
			}
			out[k] = pv
		}
		return out, nil
	}
	for _, k := range slices.Sorted(maps.Keys(in)) {
		if _, ok := s.inShapes[k]; !ok {
			return nil, &InputError{Script: s.Name, Input: k, Msg: "is not declared; the script takes " + s.inputNames()}
		}
	}
	for _, decl := range s.Inputs {
		v, given := in[decl.Name]
		if !given || v == nil {
			switch {
			case decl.HasDefault:
				v = decl.Default
			case decl.Required:
				msg := "is required"
				if decl.Description != "" {
					msg += " (" + decl.Description + ")"
				}
				return nil, &InputError{Script: s.Name, Input: decl.Name, Msg: msg}
			}
		}
		if v == nil {
			out[decl.Name] = nil
			continue
		}
		checked, _, err := s.inShapes[decl.Name].Check(v)
		if err != nil {
			return nil, &InputError{Script: s.Name, Input: decl.Name, Msg: "does not fit: " + strings.TrimPrefix(err.Error(), "at /: ")}
		}
		pv, err := plainValue(checked)
		if err != nil {
			return nil, &InputError{Script: s.Name, Input: decl.Name, Msg: err.Error()}
		}
		out[decl.Name] = pv
	}
	return out, nil
}

// plainValue turns any JSON-encodable value into the standard library's
// JSON types (float64 numbers).
func plainValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("not a JSON value: %w", err)
	}
	return out, nil
}
