package generate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Shape is a compiled output shape: a JSON Schema, ready to validate in
// one mode (strict or not).
type Shape struct {
	raw    json.RawMessage
	doc    map[string]any // the schema as decoded, walked by coerce
	schema *jsonschema.Schema
	strict bool
}

// CompileShape compiles a JSON Schema (draft 2020-12 unless it says
// otherwise) for validation in the given mode. In strict mode every object
// schema without "additionalProperties" is closed. The schema may not load
// anything: a "$ref" must point inside it.
func CompileShape(raw json.RawMessage, strict bool) (*Shape, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the output shape is not valid JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		if b, isBool := doc.(bool); isBool && b {
			obj = map[string]any{}
		} else {
			return nil, errors.New("the output shape must be a JSON Schema object, such as {\"type\": \"object\", …}")
		}
	}
	if strict {
		obj = closeObjects(deepCopy(obj).(map[string]any))
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const url = "urn:cyan:shape"
	if err := c.AddResource(url, obj); err != nil {
		return nil, fmt.Errorf("the output shape: %w", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("the output shape is not a valid JSON Schema: %s", oneLine(err.Error()))
	}
	return &Shape{raw: raw, doc: obj, schema: sch, strict: strict}, nil
}

// noLoader refuses to load schemas from anywhere.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the output shape may not refer to %s: keep every $ref inside the shape", url)
}

// closeObjects sets "additionalProperties": false on every object schema
// of s that does not say otherwise.
func closeObjects(s map[string]any) map[string]any {
	if _, has := s["additionalProperties"]; !has {
		_, props := s["properties"]
		if props || slices.Contains(typesOf(s), "object") {
			s["additionalProperties"] = false
		}
	}
	for _, k := range []string{"properties", "$defs", "definitions", "patternProperties"} {
		if m, ok := s[k].(map[string]any); ok {
			for name, sub := range m {
				if sm, ok := sub.(map[string]any); ok {
					m[name] = closeObjects(sm)
				}
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not", "if", "then", "else", "contains"} {
		if sm, ok := s[k].(map[string]any); ok {
			s[k] = closeObjects(sm)
		}
	}
	for _, k := range []string{"prefixItems", "anyOf", "allOf", "oneOf"} {
		if l, ok := s[k].([]any); ok {
			for i, sub := range l {
				if sm, ok := sub.(map[string]any); ok {
					l[i] = closeObjects(sm)
				}
			}
		}
	}
	return s
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

// typesOf lists the "type" of a schema ("string", or each of a list).
func typesOf(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// wantsString reports whether the shape's top level is a string.
func (s *Shape) wantsString() bool {
	return slices.Contains(typesOf(s.doc), "string")
}

// choices returns the options of a shape that is a string enum, or nil.
func (s *Shape) choices() []string {
	t := typesOf(s.doc)
	if len(t) != 1 || t[0] != "string" {
		return nil
	}
	enum, _ := s.doc["enum"].([]any)
	var out []string
	for _, e := range enum {
		str, ok := e.(string)
		if !ok {
			return nil
		}
		out = append(out, str)
	}
	return out
}

// isObject reports whether the shape's top level is an object, the one
// kind every provider's JSON-schema mode accepts.
func (s *Shape) isObject() bool {
	t := typesOf(s.doc)
	return len(t) == 1 && t[0] == "object"
}

// check turns an answer into a valid value: extract, coerce (unless
// strict), validate. coerced lists what was changed, for the trace.
func (s *Shape) check(answer string) (v any, coerced []string, err error) {
	v, _, err = extractJSON(answer)
	if !s.strict && s.wantsString() && !errors.Is(err, errEmpty) {
		if _, isString := v.(string); err != nil || !isString {
			v, err = strings.TrimSpace(answer), nil
			coerced = append(coerced, "/: the answer is not a JSON string: taken as the text itself")
		}
	}
	if err != nil {
		return nil, nil, &parseError{err}
	}
	if !s.strict {
		v = coerce(v, s.doc, "", &coerced)
	}
	if err := s.schema.Validate(v); err != nil {
		return nil, coerced, &validationError{describe(err)}
	}
	return v, coerced, nil
}

// Check coerces (unless the shape is strict) and validates a value that is
// already decoded — any Go value that encodes to JSON. It returns the value
// in JSON's types (numbers as json.Number) and what was coerced. The error
// reads like "at /n: got string, want number".
func (s *Shape) Check(v any) (any, []string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("not a JSON value: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	var coerced []string
	if !s.strict {
		doc = coerce(doc, s.doc, "", &coerced)
	}
	if err := s.schema.Validate(doc); err != nil {
		return nil, coerced, &validationError{describe(err)}
	}
	return doc, coerced, nil
}

// parseError is an answer without a usable JSON value.
type parseError struct{ err error }

func (e *parseError) Error() string { return e.err.Error() }
func (e *parseError) Unwrap() error { return e.err }

// validationError is a value that does not match the shape.
type validationError struct{ msg string }

func (e *validationError) Error() string { return e.msg }

// coerce applies the lax mode's conversions to v where schema s asks for
// another type: "true"/"false" to booleans, numeric text to numbers, an
// enum option matched ignoring case. It walks properties and items.
func coerce(v any, s map[string]any, path string, notes *[]string) any {
	if s == nil {
		return v
	}
	types := typesOf(s)
	switch x := v.(type) {
	case string:
		if slices.Contains(types, "string") {
			if opt, ok := matchEnum(x, s["enum"]); ok && opt != x {
				note(notes, path, strconv.Quote(x), strconv.Quote(opt))
				return opt
			}
			return x
		}
		t := strings.TrimSpace(x)
		if slices.Contains(types, "boolean") {
			switch strings.ToLower(t) {
			case "true":
				note(notes, path, strconv.Quote(x), "true")
				return true
			case "false":
				note(notes, path, strconv.Quote(x), "false")
				return false
			}
		}
		if (slices.Contains(types, "number") || slices.Contains(types, "integer")) && isNumber(t) {
			note(notes, path, strconv.Quote(x), t)
			return json.Number(t)
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		extra, _ := s["additionalProperties"].(map[string]any)
		for k, e := range x {
			sub, _ := props[k].(map[string]any)
			if sub == nil {
				sub = extra
			}
			x[k] = coerce(e, sub, path+"/"+escapePointer(k), notes)
		}
	case []any:
		prefix, _ := s["prefixItems"].([]any)
		items, _ := s["items"].(map[string]any)
		for i, e := range x {
			sub := items
			if i < len(prefix) {
				sub, _ = prefix[i].(map[string]any)
			}
			x[i] = coerce(e, sub, path+"/"+strconv.Itoa(i), notes)
		}
	}
	return v
}

func note(notes *[]string, path, from, to string) {
	if path == "" {
		path = "/"
	}
	*notes = append(*notes, fmt.Sprintf("%s: %s → %s", path, from, to))
}

func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

var number = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func isNumber(s string) bool { return number.MatchString(s) }

// matchEnum finds the option of a string enum that s names: the same text
// ignoring case, surrounding space, quotes and a final full stop; else the
// one option that appears in s as a word of its own.
func matchEnum(s string, enum any) (string, bool) {
	list, _ := enum.([]any)
	var opts []string
	for _, e := range list {
		if o, ok := e.(string); ok {
			opts = append(opts, o)
		}
	}
	if len(opts) == 0 || slices.Contains(opts, s) {
		return s, len(opts) > 0
	}
	t := strings.Trim(strings.TrimSpace(s), "\"'`*.。!")
	for _, o := range opts {
		if strings.EqualFold(t, o) {
			return o, true
		}
	}
	found := ""
	for _, o := range opts {
		if o != "" && containsWord(strings.ToLower(s), strings.ToLower(o)) {
			if found != "" {
				return "", false // two options named: ambiguous
			}
			found = o
		}
	}
	return found, found != ""
}

// containsWord reports whether w occurs in s with no letter or digit
// right before or after it.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isWordByte(s[j-1])) && (end == len(s) || !isWordByte(s[end])) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// describe turns a validation error into one line per failed leaf:
// "at /confidence: got string, want number".
func describe(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return oneLine(err.Error())
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			where := "/" + strings.Join(e.InstanceLocation, "/")
			msg := ""
			if o := e.BasicOutput(); o != nil && o.Error != nil {
				msg = o.Error.String()
			}
			out = append(out, "at "+where+": "+msg)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(out)
	out = slices.Compact(out)
	return strings.Join(out, "; ")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// shapeCache keeps compiled shapes by schema text and mode; callers
// usually pass the same few shapes again and again.
type shapeCache struct {
	mu sync.Mutex
	m  map[string]*Shape
}

const shapeCacheLimit = 256

func (c *shapeCache) get(raw json.RawMessage, strict bool) (*Shape, error) {
	key := strconv.FormatBool(strict) + string(raw)
	c.mu.Lock()
	s := c.m[key]
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := CompileShape(raw, strict)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= shapeCacheLimit {
		c.m = make(map[string]*Shape)
	}
	c.m[key] = s
	c.mu.Unlock()
	return s, nil
}
