package tools

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cyan-agent/cyan/packets"
)

// Components are the parts of the agent that the agent may change itself
// (the seed's 组件): each has a component base, main.md — what the
// component is for and how it is meant to change — which the agent reads
// with the component tool before it edits, and its edits go through the
// self_edit list of the permission object ("persona/scripts/<file>"),
// under the same confirm rules as any self-edit.
type Component struct {
	// Name is the component's path as self_edit names it:
	// "tools/extra/custom", "persona/scripts", "persona/observers".
	Name string
	// Dir is the folder it lives in now ("" when there is none, such as the
	// scripts of the built-in persona).
	Dir func() string
	// Within is the folder Dir must resolve inside (the persona's, for its
	// scripts); nil: Dir must not be a symlink (Folder).
	Within func() string
	// Base is main.md when the folder has none.
	Base string
	// Check validates a file before it is written (nil: any text file).
	Check func(file string, data []byte) error
	// Edit is the tool that edits it, when not component_edit.
	Edit string
	// OwnerOnly marks a component whose files only the owner may read
	// (the custom tools: their manifests may hold keys), whatever the
	// permission object allows.
	OwnerOnly bool
	// Secrets is the credential list its files are checked against (nil:
	// DefaultSecrets).
	Secrets *Secrets
}

//go:embed components/*.md
var componentBases embed.FS

// ComponentBase is a built-in main.md: "custom", "scripts" or "observers".
func ComponentBase(name string) string {
	b, err := componentBases.ReadFile("components/" + name + ".md")
	if err != nil {
		panic(err) // embedded: a missing file is a build mistake
	}
	return string(b)
}

// maxComponentFile bounds a file component_edit writes.
const maxComponentFile = 64 << 10

// ComponentTools returns the component tool (list the components, read
// one's main.md and files) and component_edit (write a file of one,
// checked by its Check and by the caller's self_edit). A component folder
// that exists without a main.md gets its Base written there once, so the
// person reading the folder sees it too.
//
// Reading or listing a component is reading the owner's files: the
// component tool declares packets.EffectRead (so guests are denied it by default),
// reads only through Folder (no symlink leads out of the component's
// folder; credential files and private keys are refused), and shows an
// OwnerOnly component (custom tool manifests) to the owner alone.
func (r *Registry) ComponentTools(comps []Component) []packets.Tool {
	byName := map[string]Component{}
	for _, c := range comps {
		byName[c.Name] = c
		if dir := c.dir(); dir != "" && c.Edit != "" { // cyan's own folders only; never write into a user's persona
			if f := c.folder(); !f.Exists("main.md") {
				_ = f.WriteFile("main.md", []byte(c.Base))
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	read := packets.Tool{ToolSpec: packets.ToolSpec{
		Name:  "component",
		Title: "read one of your components",
		Description: "The parts of yourself you may change: op list names them; op read {name} returns the component's main.md " +
			"(what it is for and how it is meant to change) and its files; op read {name, file} one file. Read main.md before you edit a component.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"op":{"type":"string","enum":["list","read"]},"name":{"type":"string","enum":` + quoteList(names) + `},"file":{"type":"string"}},"required":["op"],"additionalProperties":false}`),
		Kind:       packets.ToolProcess, Effects: []string{packets.EffectRead}, Source: SourceBuiltin,
	}, Run: func(_ context.Context, c *packets.ToolCall) (packets.Result, error) {
		var a struct{ Op, Name, File string }
		if err := c.Decode(&a); err != nil {
			return packets.Result{}, err
		}
		if a.Op == "list" {
			var b strings.Builder
			for _, n := range names {
				comp := byName[n]
				state := "editable with component_edit"
				if comp.Edit != "" {
					state = "edited with " + comp.Edit
				}
				if comp.dir() == "" {
					state = "not available (no folder)"
				}
				fmt.Fprintf(&b, "%s — %s\n", n, state)
			}
			return packets.Result{OutputText: strings.TrimSpace(b.String())}, nil
		}
		comp, ok := byName[a.Name]
		if !ok {
			return packets.Result{}, fmt.Errorf("no component %q; op list names them", a.Name)
		}
		if comp.OwnerOnly && !c.Owner {
			return packets.Result{}, fmt.Errorf("%w: only the owner may read %s", ErrDenied, a.Name)
		}
		if a.File != "" {
			data, err := comp.readFile(a.File)
			return packets.Result{OutputText: string(data)}, err
		}
		var b strings.Builder
		b.WriteString(comp.base())
		files := comp.files()
		fmt.Fprintf(&b, "\n\nfiles: %s", strings.Join(files, ", "))
		if len(files) == 0 {
			b.WriteString("(none)")
		}
		return packets.Result{OutputText: b.String()}, nil
	}}
	edit := packets.Tool{ToolSpec: packets.ToolSpec{
		Name:  "component_edit",
		Title: "change one of your components",
		Description: "Write a file of one of your components (persona scripts, persona observers): name, file (a plain file name), content (the whole new text). " +
			"Read its main.md with the component tool first. The file is checked before it is written; a bad one is refused with the reason.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"file":{"type":"string"},"content":{"type":"string"}},"required":["name","file","content"],"additionalProperties":false}`),
		Kind:       packets.ToolProcess, Effects: []string{packets.EffectSelfEdit}, Source: SourceBuiltin,
	}, Run: func(_ context.Context, c *packets.ToolCall) (packets.Result, error) {
		var a struct{ Name, File, Content string }
		if err := c.Decode(&a); err != nil {
			return packets.Result{}, err
		}
		comp, ok := byName[a.Name]
		switch {
		case !ok:
			return packets.Result{}, fmt.Errorf("no component %q; the component tool's op list names them", a.Name)
		case comp.Edit != "":
			return packets.Result{}, fmt.Errorf("%s is edited with %s", a.Name, comp.Edit)
		case comp.dir() == "":
			return packets.Result{}, fmt.Errorf("%s has no folder to write into (the built-in persona is read-only; configure a persona folder)", a.Name)
		case !plainFile(a.File):
			return packets.Result{}, fmt.Errorf("file %q: give a plain file name in the component's folder", a.File)
		case len(a.Content) > maxComponentFile:
			return packets.Result{}, fmt.Errorf("the content is %d bytes; the limit is %d", len(a.Content), maxComponentFile)
		}
		part := a.Name + "/" + a.File
		if !c.Perm.MaySelfEdit(part) {
			return packets.Result{}, fmt.Errorf("%w: self_edit does not include %s", ErrDenied, part)
		}
		if comp.Check != nil && a.File != "main.md" {
			if err := comp.Check(a.File, []byte(a.Content)); err != nil {
				return packets.Result{}, fmt.Errorf("not written: %v", err)
			}
		}
		if err := comp.folder().WriteFile(a.File, []byte(a.Content)); err != nil {
			return packets.Result{}, err
		}
		return packets.Result{OutputText: "wrote " + part + "; it takes effect in a moment"}, nil
	}}
	return []packets.Tool{read, edit}
}

func (c Component) dir() string {
	if c.Dir == nil {
		return ""
	}
	return c.Dir()
}

func (c Component) folder() Folder {
	f := Folder{Dir: c.dir(), Secrets: c.Secrets}
	if c.Within != nil {
		f.Within = c.Within()
	}
	return f
}

// base is the component's main.md: its folder's, else the built-in.
func (c Component) base() string {
	if c.dir() != "" {
		if b, err := c.folder().ReadFile("main.md", maxComponentFile); err == nil {
			return string(b)
		}
	}
	return c.Base
}

func (c Component) files() []string {
	if c.dir() == "" {
		return nil
	}
	var out []string
	for _, n := range c.folder().Files() {
		if n != "main.md" {
			out = append(out, n)
		}
	}
	return out
}

func (c Component) readFile(name string) ([]byte, error) {
	if !plainFile(name) {
		return nil, fmt.Errorf("file %q: give a plain file name in the component's folder", name)
	}
	if name == "main.md" {
		return []byte(c.base()), nil
	}
	if c.dir() == "" {
		return nil, fmt.Errorf("the component has no folder")
	}
	b, err := c.folder().ReadFile(name, maxComponentFile)
	if err != nil && !errors.Is(err, ErrDenied) && !c.folder().Exists(name) {
		return nil, fmt.Errorf("no file %q in the component; read it without file for the list", name)
	}
	return b, err
}

// plainFile reports whether name is a file name of a folder (no path, no
// hidden file).
func plainFile(name string) bool {
	return name != "" && len(name) <= 128 && !strings.ContainsAny(name, `/\`+"\x00") && !strings.HasPrefix(name, ".") && filepath.Base(name) == name
}

func quoteList(names []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q", n)
	}
	b.WriteByte(']')
	return b.String()
}
