package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder walks a YAML node tree into a struct by its yaml tags, so that an
// unknown key or a bad value is reported with its file, line and dotted key,
// and every problem in the file is reported at once.
type decoder struct {
	file  string
	lines map[string]int // dotted key → line where the file set it
	errs  []error
}

var (
	durationType    = reflect.TypeFor[Duration]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

func (d *decoder) fail(n *yaml.Node, key, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, key string) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return
		}
		d.decode(n.Content[0], v, key)
		return
	}
	if isNull(n) {
		return // an empty value leaves the default in place
	}
	switch {
	case v.Type() == durationType:
		d.decodeDuration(n, v, key)
		return
	case v.Kind() == reflect.Pointer && v.Type().Implements(jsonUnmarshaler):
		// A type that reads itself from JSON (a permission object): the
		// YAML subtree is handed over as JSON, errors keep the line.
		var generic any
		if err := n.Decode(&generic); err != nil {
			d.fail(n, key, "%v", err)
			return
		}
		b, err := json.Marshal(jsonable(generic))
		if err != nil {
			d.fail(n, key, "%v", err)
			return
		}
		elem := reflect.New(v.Type().Elem())
		if err := elem.Interface().(json.Unmarshaler).UnmarshalJSON(b); err != nil {
			d.fail(n, key, "%v", err)
			return
		}
		v.Set(elem)
		return
	case v.Kind() == reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		d.decode(n, elem.Elem(), key)
		v.Set(elem)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, key)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.fail(n, key, "want a list (e.g. [a, b]), got %s", describe(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", key, i))
		}
		v.Set(s)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.fail(n, key, "want a mapping (key: value), got %s", describe(n))
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			val := reflect.New(v.Type().Elem()).Elem()
			d.decode(n.Content[i+1], val, join(key, k))
			m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), val)
		}
		v.Set(m)
	case reflect.String:
		if d.scalar(n, key) {
			v.SetString(n.Value)
		}
	case reflect.Int, reflect.Int64:
		if !d.scalar(n, key) {
			return
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 10, 64)
		if err != nil {
			d.fail(n, key, "want a whole number, got %q", n.Value)
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		if !d.scalar(n, key) {
			return
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			d.fail(n, key, "want a number, got %q", n.Value)
			return
		}
		v.SetFloat(f)
	case reflect.Bool:
		if !d.scalar(n, key) {
			return
		}
		b, ok := parseBool(n.Value)
		if !ok {
			d.fail(n, key, "want true or false, got %q", n.Value)
			return
		}
		v.SetBool(b)
	default:
		panic(fmt.Sprintf("config: no decoder for %s", v.Type()))
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, key string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, orTop(key), "want a mapping of keys, got %s", describe(n))
		return
	}
	fields := yamlFields(v.Type())
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		full := join(key, k.Value)
		idx, ok := fields[k.Value]
		target := reflect.Value{}
		if ok {
			target = v.Field(idx)
		} else if s, isSections := sectionsOf(v); isSections {
			target, ok = s.section(k.Value)
		}
		if !ok {
			known := sortedKeys(fields)
			if s, isSections := sectionsOf(v); isSections {
				known = append(known, s.sectionKeys()...)
				slices.Sort(known)
			}
			d.fail(k, full, "unknown key; known keys here: %s", strings.Join(known, ", "))
			continue
		}
		if _, dup := d.lines[full]; dup {
			d.fail(k, full, "set twice in this file")
			continue
		}
		d.lines[full] = k.Line
		d.decode(val, target, full)
	}
}

// sections is a struct whose keys, besides its fields, are sections that
// registered parts declare (Bridges: bridges.<platform>).
type sections interface {
	// section makes the value a key decodes into; false: no part has it.
	section(key string) (reflect.Value, bool)
	sectionKeys() []string
}

func sectionsOf(v reflect.Value) (sections, bool) {
	if !v.CanAddr() || !v.Addr().CanInterface() {
		return nil, false
	}
	s, ok := v.Addr().Interface().(sections)
	return s, ok
}

func (d *decoder) decodeDuration(n *yaml.Node, v reflect.Value, key string) {
	if !d.scalar(n, key) {
		return
	}
	dur, err := parseDuration(n.Value)
	if err != nil {
		d.fail(n, key, "%v", err)
		return
	}
	v.SetInt(int64(dur))
}

func (d *decoder) scalar(n *yaml.Node, key string) bool {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, key, "want a single value, got %s", describe(n))
		return false
	}
	return true
}

// parseDuration accepts Go durations ("90s", "2m") and plain seconds ("90").
func parseDuration(s string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(secs * float64(time.Second)), nil
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 30s or 2m, got %q", s)
	}
	return dur, nil
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

// jsonable turns what YAML decodes (maps with any keys) into what JSON
// encodes.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return fmt.Sprintf("%q", n.Value)
	}
}

func yamlFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := range t.NumField() {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		m[tag] = i
	}
	return m
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func orTop(key string) string {
	if key == "" {
		return "(top level)"
	}
	return key
}
