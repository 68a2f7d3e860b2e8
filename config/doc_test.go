package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/doccheck"

	"go.yaml.in/yaml/v3"
)

// docPath is the configuration reference this file holds to the code.
const docPath = "../docs/configuration.md"

// docHome is the HOME the documented defaults are computed with: the doc
// writes the data dir's default as ~/.local/share/cyan.
const docHome = "/home/you"

var printKeys = flag.Bool("print-keys", false, "print every configuration key with its default, as a row of docs/configuration.md")

// docKey is one key of the configuration: its dotted path as a YAML file
// writes it ("bridges.onebot[].name", "tts.refs.<name>.audio"), its type,
// and its default.
type docKey struct {
	path string
	typ  reflect.Type
	def  reflect.Value
	// ref names the key whose keys this one repeats (a per-bridge manners
	// is bridges.manners again); its own keys are not listed.
	ref string
}

var (
	permissionType = reflect.TypeFor[json.Unmarshaler]()
)

// leaf: a type the decoder reads as one value (a scalar, a duration, a
// permission object, a list or mapping of scalars).
func leaf(t reflect.Type) bool {
	switch {
	case t == durationType:
		return true
	case t.Kind() == reflect.Pointer && t.Implements(permissionType):
		return true
	case t.Kind() == reflect.Pointer:
		return leaf(t.Elem())
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Map:
		return leaf(t.Elem())
	}
	return t.Kind() != reflect.Struct
}

// sectioned is a struct whose keys, besides its fields, are sections that
// registered parts declare (bridges.<platform>), asked the way the decoder
// asks: the walk lists their keys too, so a section a part declares needs
// its rows as much as a field does.
type sectioned interface {
	section(key string) (reflect.Value, bool)
	sectionKeys() []string
}

// configKeys walks Config by its yaml tags, breadth first, so a struct type
// met twice (Manners) is listed in full at its shortest path and the longer
// ones refer to it. Defaults are read from def; below a list item or a
// mapping's value they are the element's zero value, which is what a new
// item starts from.
func configKeys(def Config) []docKey {
	type node struct {
		path string
		v    reflect.Value
	}
	var out []docKey
	seen := map[reflect.Type]string{}
	queue := []node{{"", reflect.ValueOf(&def).Elem()}}
	visit := func(path string, ft reflect.Type, v reflect.Value) {
		if leaf(ft) {
			out = append(out, docKey{path: path, typ: ft, def: v})
			return
		}
		st := ft
		if st.Kind() == reflect.Pointer {
			st = st.Elem()
		}
		switch st.Kind() {
		case reflect.Struct:
			if prev, ok := seen[st]; ok {
				out = append(out, docKey{path: path, typ: ft, def: v, ref: prev})
				return
			}
			seen[st] = path
			if ft.Kind() == reflect.Pointer {
				// A pointer to a section: its keys start from zero when
				// the file sets it.
				out = append(out, docKey{path: path, typ: ft, def: v})
				queue = append(queue, node{path, reflect.New(st).Elem()})
				return
			}
			queue = append(queue, node{path, v})
		case reflect.Slice:
			out = append(out, docKey{path: path, typ: ft, def: v})
			queue = append(queue, node{path + "[]", reflect.New(st.Elem()).Elem()})
		case reflect.Map:
			out = append(out, docKey{path: path, typ: ft, def: v})
			queue = append(queue, node{path + ".<name>", reflect.New(st.Elem()).Elem()})
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		t := n.v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" || !f.IsExported() {
				continue
			}
			visit(join(n.path, tag), f.Type, n.v.Field(i))
		}
		if !n.v.CanAddr() {
			continue
		}
		if s, ok := n.v.Addr().Interface().(sectioned); ok {
			for _, k := range s.sectionKeys() {
				if v, ok := s.section(k); ok {
					visit(join(n.path, k), v.Type(), reflect.New(v.Type()).Elem())
				}
			}
		}
	}
	return out
}

// documentedDefaults is the configuration a daemon runs with when nothing
// is set: Load over an empty file, with HOME as the doc writes it.
func documentedDefaults(t *testing.T) Config {
	t.Helper()
	file := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(file, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": docHome, EnvConfig: file}
	c, err := Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return *c
}

// render writes a default as a YAML flow value, the way the doc writes it.
func render(v reflect.Value) string {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return "null"
	}
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" {
			return `""`
		}
	case reflect.Slice:
		if v.Len() == 0 {
			return "[]"
		}
	case reflect.Map:
		if v.Len() == 0 {
			return "{}"
		}
	}
	var node yaml.Node
	if err := node.Encode(v.Interface()); err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	setFlow(&node)
	b, err := yaml.Marshal(&node)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return strings.TrimSpace(string(b))
}

func setFlow(n *yaml.Node) {
	if n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
		n.Style = yaml.FlowStyle
	}
	for _, c := range n.Content {
		setFlow(c)
	}
}

// equalDefault compares two values of a key, an empty list or mapping
// equal to none.
func equalDefault(a, b reflect.Value) bool {
	if (a.Kind() == reflect.Slice || a.Kind() == reflect.Map) && a.Len() == 0 && b.Len() == 0 {
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// decodeLiteral reads a default as the doc writes it, with the decoder a
// configuration file goes through.
func decodeLiteral(lit string, k docKey) (reflect.Value, error) {
	if k.path == "data_dir" && strings.HasPrefix(lit, "~/") {
		lit = docHome + lit[1:]
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(lit), &root); err != nil {
		return reflect.Value{}, err
	}
	v := reflect.New(k.typ).Elem()
	d := &decoder{file: docPath, lines: map[string]int{}}
	d.decode(&root, v, k.path)
	return v, errors.Join(d.errs...)
}

// docRow is a row of a key table of the doc.
type docRow struct {
	key, def string
	line     int
	hasCode  bool
}

func docRows(d *doccheck.Doc) ([]docRow, []error) {
	var rows []docRow
	var errs []error
	for _, tab := range d.Tables() {
		kc, dc := tab.Column("key"), tab.Column("default")
		if kc < 0 || dc < 0 {
			continue
		}
		for _, r := range tab.Rows {
			if len(r.Cells) <= max(kc, dc) {
				errs = append(errs, fmt.Errorf("%s: the row has too few cells", d.Where(r.Line)))
				continue
			}
			key, ok := doccheck.Code(r.Cells[kc])
			if !ok {
				errs = append(errs, fmt.Errorf("%s: the key cell %q has no `key`", d.Where(r.Line), r.Cells[kc]))
				continue
			}
			def, hasCode := doccheck.Code(r.Cells[dc])
			rows = append(rows, docRow{key: key, def: def, line: r.Line, hasCode: hasCode})
		}
	}
	return rows, errs
}

// checkConfigDoc compares the doc's key tables with the keys of the code:
// a key without a row, a row without a key, and a stated default that is
// not the code's are each an error that says what to write.
func checkConfigDoc(d *doccheck.Doc, keys []docKey) []error {
	rows, errs := docRows(d)
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	byKey := map[string]docRow{}
	for _, r := range rows {
		if prev, dup := byKey[r.key]; dup {
			bad("%s: `%s` has a row already at line %d", d.Where(r.line), r.key, prev.line)
		}
		byKey[r.key] = r
	}
	known := map[string]bool{}
	for _, k := range keys {
		known[k.path] = true
		r, ok := byKey[k.path]
		switch {
		case !ok:
			bad("%s lacks the key `%s`: add the row | `%s` | `%s` | what it does |", d.Path, k.path, k.path, render(k.def))
			continue
		case !r.hasCode:
			bad("%s: the default of `%s` is not written as a value in a code span; write `%s` first", d.Where(r.line), k.path, render(k.def))
			continue
		case k.path == "data_dir" && runtime.GOOS != "linux":
			continue // the documented default is Linux's user data folder
		}
		got, err := decodeLiteral(r.def, k)
		if err != nil {
			bad("%s: the default of `%s`, `%s`, does not read as a value of it: %v", d.Where(r.line), k.path, r.def, err)
			continue
		}
		if !equalDefault(got, k.def) {
			bad("%s: the doc says `%s` defaults to `%s`, the code to `%s`", d.Where(r.line), k.path, r.def, render(k.def))
		}
	}
	for _, r := range rows {
		if !known[r.key] {
			bad("%s: `%s` is not a configuration key (cyan config check would refuse it); remove the row or fix its name", d.Where(r.line), r.key)
		}
	}
	return append(errs, d.CheckTOC(3)...)
}

// TestConfigurationDocIsTrue holds docs/configuration.md to this package:
// every key of Config (by its yaml tags, and the sections registered parts
// declare) has a row, every row names a key that exists, and the default
// each row states — the first code span of its default cell, read as YAML
// by the configuration's own decoder — is the default Load gives. Run with
// -print-keys to print the rows the code implies.
func TestConfigurationDocIsTrue(t *testing.T) {
	keys := configKeys(documentedDefaults(t))
	if *printKeys {
		for _, k := range keys {
			ref := ""
			if k.ref != "" {
				ref = " (the keys of `" + k.ref + "`)"
			}
			fmt.Printf("| `%s` | `%s` |%s |\n", k.path, render(k.def), ref)
		}
	}
	if len(keys) < 100 {
		t.Fatalf("the walk found only %d keys; it no longer reads Config", len(keys))
	}
	d, err := doccheck.Read(docPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range checkConfigDoc(d, keys) {
		t.Error(err)
	}
}

// TestConfigurationDocCheckFails: the check finds each kind of drift in a
// copy of the doc — a row removed, a row for a key that does not exist, a
// default changed, a default written in words only — and names it.
func TestConfigurationDocCheckFails(t *testing.T) {
	keys := configKeys(documentedDefaults(t))
	d, err := doccheck.Read(docPath)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(d.Lines, "\n")
	cases := []struct{ name, from, to, want string }{
		{"missing", "| `memory.gain` | `5` |", "| not a key row |", "lacks the key `memory.gain`"},
		{"unknown", "| `store.memory_mb` |", "| `store.memory_megabytes` |", "`store.memory_megabytes` is not a configuration key"},
		{"default", "| `bridges.resume_max_age` | `30m` |", "| `bridges.resume_max_age` | `1h` |", "says `bridges.resume_max_age` defaults to `1h`, the code to `30m0s`"},
		{"list default", "| `tts.channels` | `[desktop]` |", "| `tts.channels` | `[home]` |", "the code to `[desktop]`"},
		{"in words", "| `log.level` | `info` |", "| `log.level` | info |", "is not written as a value"},
		{"not a value", "| `llm.timeout` | `120s` |", "| `llm.timeout` | `two minutes` |", "does not read as a value"},
		{"twice", "| `log.format` | `text` | `text` or `json` |", "| `log.format` | `text` | `text` or `json` |\n| `log.format` | `text` | again |", "has a row already"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(text, c.from) {
				t.Fatalf("the doc has no %q to change", c.from)
			}
			errs := checkConfigDoc(doccheck.Parse(docPath, strings.Replace(text, c.from, c.to, 1)), keys)
			if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), c.want) }) {
				t.Errorf("errors %v, want one saying %q", errs, c.want)
			}
		})
	}
}

// TestConfigurationDocExamplesLoad: every YAML example in the doc is a
// configuration Load accepts (each alone, as a cyan.yaml), so no example
// shows a key or a value the daemon would refuse.
func TestConfigurationDocExamplesLoad(t *testing.T) {
	d, err := doccheck.Read(docPath)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := 0; i < len(d.Lines); i++ {
		if strings.TrimSpace(d.Lines[i]) != "```yaml" {
			continue
		}
		start := i + 1
		var b strings.Builder
		for i++; i < len(d.Lines) && strings.TrimSpace(d.Lines[i]) != "```"; i++ {
			b.WriteString(d.Lines[i] + "\n")
		}
		n++
		file := filepath.Join(t.TempDir(), "cyan.yaml")
		if err := os.WriteFile(file, []byte(FillOwnerPlaceholders(b.String())), 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{EnvConfig: file, EnvDataDir: t.TempDir()}
		if _, err := Load(func(k string) string { return env[k] }); err != nil {
			t.Errorf("%s: the example does not load: %v", d.Where(start), strings.ReplaceAll(err.Error(), file, "the example"))
		}
	}
	if n == 0 {
		t.Errorf("%s has no ```yaml example", docPath)
	}
}

// TestConfigKeysWalk: the walk lists the keys a file can set, and the
// check it feeds fails on a missing key, an unknown one and a wrong
// default.
func TestConfigKeysWalk(t *testing.T) {
	keys := configKeys(documentedDefaults(t))
	paths := map[string]docKey{}
	for _, k := range keys {
		paths[k.path] = k
	}
	for _, want := range []string{"bridges.resume_max_age", "llm.base_url", "bridges.onebot", "bridges.onebot[].name",
		"bridges.manners.chime_in", "tts.refs.<name>.audio", "mcp.servers[].env", "permissions.owner", "data_dir"} {
		if _, ok := paths[want]; !ok {
			t.Errorf("the walk lacks %s", want)
		}
	}
	if k := paths["bridges.onebot[].manners"]; k.ref != "bridges.manners" {
		t.Errorf("bridges.onebot[].manners refers to %q, want bridges.manners", k.ref)
	}
	if _, ok := paths["bridges.onebot[].manners.chime_in"]; ok {
		t.Error("a per-bridge manners is listed key by key")
	}
	for _, c := range []struct {
		key, lit string
		ok       bool
	}{
		{"bridges.resume_max_age", "30m", true},
		{"bridges.resume_max_age", "1800", true},
		{"bridges.resume_max_age", "31m", false},
		{"llm.base_url", "http://127.0.0.1:11434/v1", true},
		{"api.max_body_bytes", "1_048_576", true},
		{"tts.channels", "[desktop]", true},
		{"tts.channels", "[]", false},
		{"observers.speech.channels", "[]", true},
		{"permissions.owner", "null", true},
		{"data_dir", "~/.local/share/cyan", true},
	} {
		k := paths[c.key]
		v, err := decodeLiteral(c.lit, k)
		if ok := err == nil && equalDefault(v, k.def); ok != c.ok {
			t.Errorf("%s = %s: matches the default %v, want %v (err %v)", c.key, c.lit, ok, c.ok, err)
		}
	}
	if !slices.ContainsFunc(keys, func(k docKey) bool { return k.path == "store.min_free_mb" }) {
		t.Error("the walk lacks store.min_free_mb")
	}
}

// envVariables lists the environment variables the package reads: its
// string constants whose value starts with CYAN_, read from its source.
func envVariables(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				for _, v := range s.(*ast.ValueSpec).Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, _ := strconv.Unquote(lit.Value); strings.HasPrefix(s, "CYAN_") {
							out = append(out, s)
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestConfigurationDocEnvironment: the doc's table of environment
// variables lists exactly the ones the package reads.
func TestConfigurationDocEnvironment(t *testing.T) {
	code := envVariables(t)
	if len(code) < 7 {
		t.Fatalf("found only %q in the source", code)
	}
	d, err := doccheck.Read(docPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, tab := range d.Tables() {
		if c := tab.Column("variable"); c >= 0 {
			for _, r := range tab.Rows {
				if v, ok := doccheck.Code(r.Cells[c]); ok {
					doc = append(doc, v)
				}
			}
		}
	}
	slices.Sort(doc)
	for _, v := range code {
		if !slices.Contains(doc, v) {
			t.Errorf("%s: the environment table lacks %s, which config reads", docPath, v)
		}
	}
	for _, v := range doc {
		if !slices.Contains(code, v) {
			t.Errorf("%s: the environment table lists %s, which config does not read", docPath, v)
		}
	}
}
