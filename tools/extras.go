package tools

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/packets"
	"github.com/fsnotify/fsnotify"
	"go.yaml.in/yaml/v3"
)

//go:embed extra/default/*.yaml
var shipped embed.FS

// Manifest is an extra tool's file (see extra/README.md).
type Manifest struct {
	Name        string         `yaml:"name"`
	Title       string         `yaml:"title"`
	Description string         `yaml:"description"`
	Input       []yaml.Node    `yaml:"input"`
	Parameters  map[string]any `yaml:"parameters"`
	Effects     *[]string      `yaml:"effects"`
	Timeout     string         `yaml:"timeout"`
	Run         struct {
		Argv []string `yaml:"argv"`
		HTTP *struct {
			URL    string `yaml:"url"`
			Method string `yaml:"method"`
		} `yaml:"http"`
		Script string `yaml:"script"`
	} `yaml:"run"`
}

// ManifestError is a bad manifest, with its file and line.
type ManifestError struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Msg  string `json:"error"`
}

func (e *ManifestError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Extras loads extra tools from their folders into a registry and keeps
// them current.
type Extras struct {
	reg      *Registry
	sandbox  *Sandbox
	scripts  Scripts
	dirs     map[string]string // source → folder on disk
	http     *http.Client
	log      *slog.Logger
	mu       sync.Mutex
	problems map[string][]*ManifestError // source → problems
}

// ExtrasOptions configure NewExtras.
type ExtrasOptions struct {
	// Dir is <data dir>/tools/extra; provided and custom live below it.
	Dir     string
	Sandbox *Sandbox
	Scripts Scripts // runs script tools; nil: they report they cannot run
	Logger  *slog.Logger
}

// NewExtras creates the folders; Load reads the manifests. (The daemon
// registers every part's tools in between, so a manifest that takes a
// built-in's name is the one refused.)
func (r *Registry) NewExtras(o ExtrasOptions) (*Extras, error) {
	if o.Logger == nil {
		o.Logger = r.log
	}
	e := &Extras{reg: r, sandbox: o.Sandbox, scripts: o.Scripts, log: o.Logger, problems: map[string][]*ManifestError{},
		http: &http.Client{Timeout: 60 * time.Second},
		dirs: map[string]string{SourceProvided: filepath.Join(o.Dir, "provided"), SourceCustom: filepath.Join(o.Dir, "custom")}}
	for _, d := range e.dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("tools: create %s: %w", d, err)
		}
	}
	return e, nil
}

// Load reads every manifest once: the shipped defaults, then the provided
// and custom folders. A name another source holds is a problem of the
// manifest (Problems).
func (e *Extras) Load() {
	sub, _ := fs.Sub(shipped, "extra/default")
	e.load(SourceDefault, sub, "tools/extra/default", "")
	for _, src := range []string{SourceProvided, SourceCustom} {
		e.reload(src)
	}
}

// Problems lists the manifests that could not be loaded.
func (e *Extras) Problems() []*ManifestError {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*ManifestError
	for _, ps := range e.problems {
		out = append(out, ps...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}

// Dir returns the folder of a source.
func (e *Extras) Dir(source string) string { return e.dirs[source] }

func (e *Extras) reload(source string) {
	dir := e.dirs[source]
	e.load(source, os.DirFS(dir), dir, dir)
}

// load parses every manifest of a folder and replaces the source's tools.
func (e *Extras) load(source string, fsys fs.FS, shown, disk string) {
	entries, _ := fs.ReadDir(fsys, ".")
	var list []packets.Tool
	var problems []*ManifestError
	for _, ent := range entries {
		ext := filepath.Ext(ent.Name())
		if ent.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") || strings.HasSuffix(ent.Name(), ".ai.yaml") {
			continue
		}
		b, err := fs.ReadFile(fsys, ent.Name())
		file := filepath.Join(shown, ent.Name())
		if err != nil {
			problems = append(problems, &ManifestError{File: file, Msg: err.Error()})
			continue
		}
		t, merr := e.parse(file, disk, strings.TrimSuffix(ent.Name(), ext), b)
		if merr != nil {
			problems = append(problems, merr)
			continue
		}
		list = append(list, t)
	}
	for _, err := range e.reg.Replace(source, list) {
		problems = append(problems, &ManifestError{File: shown, Msg: err.Error()})
	}
	e.mu.Lock()
	e.problems[source] = problems
	e.mu.Unlock()
	for _, p := range problems {
		e.log.Warn("extra tool not loaded", "problem", p.Error())
	}
	e.log.Info("extra tools loaded", "source", source, "tools", len(list), "problems", len(problems))
}

// ParseManifest reads a manifest; file names it in errors.
func (e *Extras) parse(file, dir, stem string, b []byte) (packets.Tool, *ManifestError) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return packets.Tool{}, yamlError(file, err)
	}
	var m Manifest
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil && !errors.Is(err, io.EOF) {
		return packets.Tool{}, yamlError(file, err)
	}
	line := func(key string) int {
		if len(root.Content) > 0 {
			n := root.Content[0]
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					return n.Content[i].Line
				}
			}
		}
		return 0
	}
	bad := func(key, format string, args ...any) (packets.Tool, *ManifestError) {
		return packets.Tool{}, &ManifestError{File: file, Line: line(key), Msg: key + ": " + fmt.Sprintf(format, args...)}
	}
	if m.Name == "" {
		m.Name = stem
	}
	if !ValidName(m.Name) {
		return bad("name", "%q is not a tool name (a letter, then letters, digits, _ . -)", m.Name)
	}
	if strings.TrimSpace(m.Title) == "" && strings.TrimSpace(m.Description) == "" {
		return bad("title", "a tool needs a title or a description")
	}
	spec := packets.ToolSpec{Name: m.Name, Title: m.Title, Description: orText(m.Description, m.Title), Kind: packets.ToolProcess}
	switch {
	case len(m.Input) > 0 && m.Parameters != nil:
		return bad("parameters", "give input (ISDK's list) or parameters (JSON Schema), not both")
	case len(m.Input) > 0:
		schema, err := inputSchema(m.Input)
		if err != nil {
			return bad("input", "%v", err)
		}
		spec.Parameters = schema
	case m.Parameters != nil:
		if m.Parameters["type"] != "object" {
			return bad("parameters", "must be a JSON Schema object with type: object")
		}
		spec.Parameters, _ = json.Marshal(m.Parameters)
	}
	timeout := 30 * time.Second
	if m.Timeout != "" {
		d, err := time.ParseDuration(m.Timeout)
		if err != nil || d <= 0 || d > 10*time.Minute {
			return bad("timeout", "%q is not a duration up to 10m, such as 20s", m.Timeout)
		}
		timeout = d
	}
	kinds := 0
	var run packets.ToolFunc
	var effects []string
	if len(m.Run.Argv) > 0 {
		kinds++
		run, effects = e.argvRun(m.Run.Argv, dir, timeout, func() bool { return slices.Contains(effects, packets.EffectNetwork) }), []string{packets.EffectExecute}
	}
	if h := m.Run.HTTP; h != nil {
		kinds++
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("run", "http.url %q is not an http(s) URL", h.URL)
		}
		method := strings.ToUpper(orText(h.Method, "POST"))
		if method != "GET" && method != "POST" {
			return bad("run", "http.method %q is not GET or POST", h.Method)
		}
		run, effects = e.httpRun(u.String(), method, timeout), []string{packets.EffectNetwork}
	}
	if m.Run.Script != "" {
		kinds++
		if dir == "" || strings.Contains(m.Run.Script, "..") || filepath.IsAbs(m.Run.Script) {
			return bad("run", "script %q must be a file next to the manifest", m.Run.Script)
		}
		if err := e.checkScript(dir, m.Run.Script); err != nil {
			return bad("run", "script %s: %v", m.Run.Script, err)
		}
		run, effects = e.scriptRun(dir, m.Run.Script), []string{} // its own calls are checked one by one
		spec.AI = true
	}
	if kinds != 1 {
		return bad("run", "give exactly one of argv: [program, args…], http: {url, method} or script: file.ai.yaml")
	}
	if m.Effects != nil {
		effects = *m.Effects
		for _, ef := range effects {
			switch ef {
			case packets.EffectRead, packets.EffectWrite, packets.EffectExecute, packets.EffectNetwork, packets.EffectMemory, packets.EffectOperate, packets.EffectSelfEdit:
			default:
				return bad("effects", "%q is not an effect (read, write, execute, network, memory)", ef)
			}
		}
	}
	spec.Effects = effects
	return packets.Tool{ToolSpec: spec, Run: run}, nil
}

func yamlError(file string, err error) *ManifestError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if _, err := fmt.Sscanf(msg, "line %d:", &line); err == nil {
		msg = strings.TrimSpace(msg[strings.IndexByte(msg, ':')+1:])
	} else if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i:], "line %d", &line)
	}
	return &ManifestError{File: file, Line: line, Msg: msg}
}

// inputSchema turns ISDK's input list into a JSON Schema object.
func inputSchema(items []yaml.Node) (json.RawMessage, error) {
	props := map[string]any{}
	required := []string{}
	for _, it := range items {
		var name string
		spec := map[string]any{}
		switch it.Kind {
		case yaml.ScalarNode:
			name = it.Value
		case yaml.MappingNode:
			if len(it.Content) != 2 {
				return nil, fmt.Errorf("line %d: each entry is one parameter: - name: {description, required, …}", it.Line)
			}
			name = it.Content[0].Value
			if err := it.Content[1].Decode(&spec); err != nil && it.Content[1].Tag != "!!null" {
				return nil, fmt.Errorf("line %d: %s: want {description, required, default, example, enum, type}", it.Line, name)
			}
		default:
			return nil, fmt.Errorf("line %d: an entry is a name or name: {…}", it.Line)
		}
		if !ValidName(name) {
			return nil, fmt.Errorf("line %d: %q is not a parameter name", it.Line, name)
		}
		prop := map[string]any{"type": "string"}
		for k, v := range spec {
			switch k {
			case "required":
				if v == true {
					required = append(required, name)
				}
			case "description", "default", "enum", "type", "title":
				prop[k] = v
			case "example", "examples":
				if l, ok := v.([]any); ok {
					prop["examples"] = l
				} else {
					prop["examples"] = []any{v}
				}
			case "hidden":
			default:
				return nil, fmt.Errorf("line %d: %s: unknown key %q", it.Line, name, k)
			}
		}
		props[name] = prop
	}
	b, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	return b, err
}

// resultOf reads a program's or server's output: a JSON object with
// output_text is a result; anything else is the text.
func resultOf(out string) packets.Result {
	var r struct {
		Text  *string  `json:"output_text"`
		Files []string `json:"output_file"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(out)), &r) == nil && r.Text != nil {
		return packets.Result{OutputText: *r.Text, OutputFile: r.Files}
	}
	return packets.Result{OutputText: out}
}

// argvRun runs a program in the jail (when the daemon has one), with its
// own folder visible read-only besides the roots, and the network only
// when the manifest declares the network effect.
func (e *Extras) argvRun(argv []string, dir string, timeout time.Duration, network func() bool) packets.ToolFunc {
	return func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		var args map[string]any
		_ = json.Unmarshal(c.Args, &args)
		cmd := make([]string, len(argv))
		for i, a := range argv {
			for k, v := range args {
				s, ok := v.(string)
				if !ok {
					b, _ := json.Marshal(v)
					s = string(b)
				}
				a = strings.ReplaceAll(a, "{{"+k+"}}", s)
			}
			cmd[i] = a
		}
		if dir != "" && strings.Contains(cmd[0], "/") && !filepath.IsAbs(cmd[0]) {
			cmd[0] = filepath.Join(dir, cmd[0])
		}
		sb := *e.sandbox
		sb.Timeout = timeout
		sb.Network = network()
		wd := dir
		if wd == "" {
			wd = os.TempDir()
		} else {
			sb.ReadOnly = append(slices.Clone(sb.ReadOnly), dir)
		}
		res, err := sb.Run(ctx, cmd, wd, bytes.NewReader(c.Args))
		if err != nil {
			return packets.Result{}, err
		}
		if res.Exit != 0 {
			return packets.Result{}, fmt.Errorf("%s failed: %s", c.Tool, strings.TrimSpace(res.Text()))
		}
		return resultOf(res.Output), nil
	}
}

func (e *Extras) httpRun(u, method string, timeout time.Duration) packets.ToolFunc {
	return func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var body io.Reader
		target := u
		if method == "GET" {
			var args map[string]any
			_ = json.Unmarshal(c.Args, &args)
			q := url.Values{}
			for k, v := range args {
				s, ok := v.(string)
				if !ok {
					b, _ := json.Marshal(v)
					s = string(b)
				}
				q.Set(k, s)
			}
			if len(q) > 0 {
				target += map[bool]string{true: "&", false: "?"}[strings.Contains(u, "?")] + q.Encode()
			}
		} else {
			body = bytes.NewReader(c.Args)
		}
		req, err := http.NewRequestWithContext(ctx, method, target, body)
		if err != nil {
			return packets.Result{}, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := e.http.Do(req)
		if err != nil {
			return packets.Result{}, fmt.Errorf("%s: %w", c.Tool, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode/100 != 2 {
			return packets.Result{}, fmt.Errorf("%s: the server answered %s: %.200s", c.Tool, resp.Status, b)
		}
		return resultOf(string(b)), nil
	}
}

// checkScript reports, when the manifest is loaded, a script tool whose
// script is missing or does not parse, so that cyan tool ls shows it and
// the model is not offered a tool that cannot run; the folder is watched,
// so fixing the script brings the tool back. Without Scripts nothing is
// checked (the call says it cannot run).
func (e *Extras) checkScript(dir, file string) error {
	if e.scripts == nil {
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	_, err = root.Stat(file)
	root.Close()
	if err != nil {
		return fmt.Errorf("no such file next to the manifest (%v)", err)
	}
	return e.scripts.CheckFile(filepath.Join(dir, file))
}

// scriptRun runs a prompt script next to the manifest with the call's
// arguments as its inputs (those it declares). The file is read on every
// call, so an edit applies to the next one, and only through an os.Root of
// the manifest's folder: a link leading out of it is refused. A text value
// is the tool's output; any other value is output as JSON.
func (e *Extras) scriptRun(dir, file string) packets.ToolFunc {
	return func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		if e.scripts == nil {
			return packets.Result{}, errors.New("script tools need a model, and none is configured")
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return packets.Result{}, err
		}
		_, err = root.Stat(file)
		root.Close()
		if err != nil {
			return packets.Result{}, fmt.Errorf("%s: %w", c.Tool, err)
		}
		in := map[string]any{}
		if len(c.Args) > 0 {
			if err := json.Unmarshal(c.Args, &in); err != nil {
				return packets.Result{}, fmt.Errorf("%s: the arguments are not a JSON object: %w", c.Tool, err)
			}
		}
		var v any
		if err := e.scripts.CallFile(ctx, filepath.Join(dir, file), c.Caller.Channel, packetInputs(c.Natural, in), &v); err != nil {
			return packets.Result{}, fmt.Errorf("%s: %w", c.Tool, err)
		}
		if text, ok := v.(string); ok {
			return packets.Result{OutputText: text}, nil
		}
		b, _ := json.Marshal(v)
		return packets.Result{OutputText: string(b)}, nil
	}
}

// Watch reloads a folder when a manifest in it changes, within about a
// tenth of a second, until ctx ends.
func (e *Extras) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	bySource := map[string]string{}
	for src, d := range e.dirs {
		if err := w.Add(d); err != nil {
			return fmt.Errorf("tools: watch %s: %w", d, err)
		}
		bySource[d] = src
	}
	// What changed between the first load and the watch starting.
	for src := range e.dirs {
		e.reload(src)
	}
	const settle = 100 * time.Millisecond
	pending := map[string]bool{}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if src, ok := bySource[filepath.Dir(ev.Name)]; ok {
				pending[src] = true
				timer.Reset(settle)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			e.log.Warn("watching extra tools", "err", err)
		case <-timer.C:
			for src := range pending {
				e.reload(src)
			}
			clear(pending)
		}
	}
}

// CustomTool is the built-in with which the agent writes its own extra
// tools into tools/extra/custom. The caller's permission object must allow
// it in self_edit ("tools/extra/custom/<name>.yaml"); the manifest is
// checked before it is written.
func (e *Extras) CustomTool() packets.Tool {
	return packets.Tool{ToolSpec: packets.ToolSpec{
		Name:  "custom_tool",
		Title: "write one of your own tools",
		Description: "Create or replace a tool of your own: manifest is the YAML of an extra tool " +
			"(name, title, description, input, effects, run: {argv | http | script}). It is live within a second.",
		Parameters: Schema("name", "string", "the tool's name", "manifest", "string", "the manifest's YAML"),
		Kind:       packets.ToolProcess, Effects: []string{packets.EffectSelfEdit},
	}, Run: func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		var a struct {
			Name     string `json:"name"`
			Manifest string `json:"manifest"`
		}
		if err := c.Decode(&a); err != nil {
			return packets.Result{}, err
		}
		if !ValidName(a.Name) {
			return packets.Result{}, fmt.Errorf("%q is not a tool name", a.Name)
		}
		part := "tools/extra/custom/" + a.Name + ".yaml"
		if !c.Perm.MaySelfEdit(part) {
			return packets.Result{}, fmt.Errorf("%w: self_edit does not include %s", ErrDenied, part)
		}
		dir := e.dirs[SourceCustom]
		if _, merr := e.parse(part, dir, a.Name, []byte(a.Manifest)); merr != nil {
			return packets.Result{}, fmt.Errorf("the manifest has a mistake: %v", merr)
		}
		if err := (Folder{Dir: dir}).WriteFile(a.Name+".yaml", []byte(a.Manifest)); err != nil {
			return packets.Result{}, err
		}
		return packets.Result{OutputText: "saved " + part + "; it is callable in a moment"}, nil
	}}
}
