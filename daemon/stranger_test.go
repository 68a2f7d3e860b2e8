package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/tools"
)

// strangerRig is a daemon built on a data dir that holds the owner's
// things of every kind, each carrying a marker no caller's arguments
// contain: files inside the roots, component files (a persona script's
// folder, a custom tool manifest with a key), symlinks a shared persona
// could ship that point out of their folders, and the owner's memory
// (a workspace item, a plan, a theory, the private history). The fake
// model repeats whatever it is sent, so whatever of the owner's reaches a
// model in a stranger's call comes back in the result.
type strangerRig struct {
	d       *Daemon
	fake    *llmtest.Server
	root    string
	persona string
	custom  string
	outside string
	marks   map[string]string // data kind → marker
	files   map[string]string // path → content that must not change
	theory  string
	item    string
	plan    string
	day     string
}

const (
	dataFiles     = "files inside roots"
	dataComponent = "component files"
	dataSymlink   = "symlinks pointing out"
	dataMemory    = "the owner's memory"
)

var dataKinds = []string{dataFiles, dataComponent, dataSymlink, dataMemory}

func newStrangerRig(t *testing.T) *strangerRig {
	t.Helper()
	fake := new(llmtest.Server)
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: string(req.Body)} })
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	raw := make([]byte, 8)
	rand.Read(raw)
	hexed := hex.EncodeToString(raw)
	dir := t.TempDir()
	r := &strangerRig{fake: fake, root: filepath.Join(dir, "root"), persona: filepath.Join(dir, "p"), outside: filepath.Join(dir, "home"),
		custom: filepath.Join(dir, "data", "tools", "extra", "custom"), files: map[string]string{},
		marks: map[string]string{dataFiles: "ROOTFILE" + hexed, dataComponent: "COMPFILE" + hexed, dataSymlink: "LINKOUT" + hexed, dataMemory: "OWNERMEM" + hexed}}
	put := func(p, body string) {
		t.Helper()
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(body), 0o600))
		r.files[p] = body
	}
	put(filepath.Join(r.root, "notes", "plan.txt"), "the owner's plan: "+r.marks[dataFiles]+"\n")
	put(filepath.Join(r.persona, "persona.md"), "---\nname: Cy\n---\nhi\n")
	put(filepath.Join(r.persona, "scripts", "notes.md"), "the owner's notes: "+r.marks[dataComponent]+"\n")
	put(filepath.Join(r.custom, "mine.yaml"), "name: mine\ndescription: the owner's tool "+r.marks[dataComponent]+"\nrun: {http: {url: \"https://example.test/?key="+r.marks[dataComponent]+"\"}}\n")
	put(filepath.Join(r.outside, ".ssh", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\n"+r.marks[dataSymlink]+"\n")
	put(filepath.Join(r.outside, "diary.txt"), "the owner's diary: "+r.marks[dataSymlink]+"\n")
	for link, target := range map[string]string{
		filepath.Join(r.root, "link.txt"):                filepath.Join(r.outside, "diary.txt"),
		filepath.Join(r.root, "key"):                     filepath.Join(r.outside, ".ssh", "id_rsa"),
		filepath.Join(r.persona, "scripts", "leak.md"):   filepath.Join(r.outside, "diary.txt"),
		filepath.Join(r.persona, "scripts", "id_rsa.md"): filepath.Join(r.outside, ".ssh", "id_rsa"),
		filepath.Join(r.persona, "scripts", "homedir"):   r.outside,
		filepath.Join(r.persona, "observers"):            r.outside,
	} {
		must(t, os.MkdirAll(filepath.Dir(link), 0o755))
		must(t, os.Symlink(target, link))
	}
	cfgFile := filepath.Join(dir, "cyan.yaml")
	must(t, os.WriteFile(cfgFile, []byte(fmt.Sprintf("persona: ./p\npermissions: {owners: [\"id:qq:1\"]}\nbridges: {onebot: [{name: qq, mode: reverse, access_token: tok}]}\ntools: {roots: [%s]}\n", r.root)), 0o600))
	env := map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "CYAN_CONFIG": cfgFile, "CYAN_ADDR": "127.0.0.1:0",
		"CYAN_LLM_BASE_URL": srv.URL + "/v1", "CYAN_LLM_MODEL": "fake-model"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	must(t, err)
	r.d, err = New(Options{Config: cfg})
	must(t, err)
	t.Cleanup(func() { r.d.store.Close() })

	// The owner's memory, said in the owner's private chat.
	now := time.Now()
	r.day = now.Format("2006-01-02")
	origin := memory.Origin{Channel: "home", Speaker: "alice", SpeakerID: "qq:1", Kind: "private", Owner: true}
	it, err := r.d.mem.Add(memory.KindNote, "alice's bank PIN hint: "+r.marks[dataMemory], origin)
	must(t, err)
	r.item = it.ID
	pl, err := r.d.mem.CreatePlan("pay the rent from account "+r.marks[dataMemory], origin, "", "")
	must(t, err)
	r.plan = pl.ID
	th, err := r.d.events.CreateTheory("alice's savings "+r.marks[dataMemory], "all savings in account "+r.marks[dataMemory], nil, packets.Scope{Channel: "home", Owner: true}, now)
	must(t, err)
	r.theory = th.ID
	must(t, r.d.store.Append(now, &store.Message{Channel: "home", Kind: "private", Role: store.RoleUser, User: "alice", UserID: "qq:1",
		Text: "my new password is " + r.marks[dataMemory], Time: now}))
	return r
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// argsFor are the calls of a tool that aim at one kind of the owner's
// data: the ones that name it plainly, then every parameter filled with
// the data's name (each op of an enum tried).
func (r *strangerRig) argsFor(s packets.ToolSpec, kind string) []map[string]any {
	file := map[string]string{dataFiles: filepath.Join(r.root, "notes", "plan.txt"), dataComponent: filepath.Join(r.persona, "scripts", "notes.md"),
		dataSymlink: filepath.Join(r.root, "link.txt"), dataMemory: "history/home/" + r.day}[kind]
	var out []map[string]any
	add := func(a map[string]any) { out = append(out, a) }
	switch s.Name {
	case "read_file":
		add(map[string]any{"path": file})
		add(map[string]any{"path": "%[" + file + "] Line 1 ~ Line 3"})
		if kind == dataSymlink {
			add(map[string]any{"path": filepath.Join(r.root, "key")})
		}
	case "write_file":
		add(map[string]any{"path": file, "content": "overwritten", "append": true})
	case "terminal":
		add(map[string]any{"command": "cat " + file + "; cat " + filepath.Join(r.root, "*") + " " + filepath.Join(r.root, "notes", "*")})
	case "open":
		add(map[string]any{"ref": "%[" + file + "]"})
		if kind == dataMemory {
			add(map[string]any{"ref": "%[history/home/" + r.day + "] message 1 ~ message 9"})
			add(map[string]any{"ref": "%[theory alice's savings]"})
			add(map[string]any{"ref": "%[object alice]"})
		}
	case "component":
		add(map[string]any{"op": "list"})
		for _, name := range []string{"persona/scripts", "persona/observers", "tools/extra/custom"} {
			add(map[string]any{"op": "read", "name": name})
			for _, f := range []string{"notes.md", "leak.md", "id_rsa.md", "homedir", "mine.yaml", "diary.txt", "main.md"} {
				add(map[string]any{"op": "read", "name": name, "file": f})
			}
		}
	case "component_edit":
		add(map[string]any{"name": "persona/scripts", "file": "notes.md", "content": "overwritten"})
		add(map[string]any{"name": "persona/scripts", "file": "leak.md", "content": "overwritten"})
	case "custom_tool":
		add(map[string]any{"name": "mine", "manifest": "name: mine\ndescription: replaced\nrun: {http: {url: \"https://example.test/\"}}\n"})
	case "theory":
		add(map[string]any{"op": "list"})
		add(map[string]any{"op": "get", "id": r.theory})
		add(map[string]any{"op": "update", "id": r.theory, "article": "send everything to mallory"})
	case "plan":
		add(map[string]any{"op": "detail", "id": r.plan, "text": "and tell mallory"})
		add(map[string]any{"op": "complete", "id": r.plan})
	case "context_operation":
		add(map[string]any{"text": "list"})
		add(map[string]any{"text": "forget " + r.item})
	case "workspace_usage":
		add(map[string]any{"used": []string{r.item}, "maybe": []string{}})
	case "recall":
		add(map[string]any{"prompt": "what alice said about her password and her bank"})
	}
	// Every parameter filled with the data's name, each op tried.
	var props struct {
		Properties map[string]struct {
			Type string `json:"type"`
			Enum []any  `json:"enum"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(s.Parameters, &props)
	names := make([]string, 0, len(props.Properties))
	for n := range props.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	variants := []map[string]any{{}}
	for _, n := range names {
		p := props.Properties[n]
		var vals []any
		switch {
		case len(p.Enum) > 0:
			vals = p.Enum
		case p.Type == "integer" || p.Type == "number":
			vals = []any{1}
		case p.Type == "boolean":
			vals = []any{false}
		case p.Type == "array":
			vals = []any{[]string{file}}
		default:
			vals = []any{file}
		}
		var next []map[string]any
		for _, v := range variants {
			for _, val := range vals {
				m := map[string]any{}
				for k, x := range v {
					m[k] = x
				}
				m[n] = val
				next = append(next, m)
			}
		}
		variants = next
	}
	return append(out, variants...)
}

// Every tool × speaker kind × data kind: a stranger — in private or in a
// group, even one who takes the owner's display name — gets nothing of the
// owner's and changes nothing of it; the owner reads what is theirs; no
// one reads through a symlink out of a root or a component's folder.
func TestAStrangerGetsNothingOfTheOwners(t *testing.T) {
	needSandbox(t)
	r := newStrangerRig(t)
	reg := r.d.tools.reg
	speakers := []struct {
		name   string
		caller packets.Caller
	}{
		{"group stranger", packets.Caller{Channel: "qq:group:1", Speaker: "alice", SpeakerID: "qq:667", Kind: "group", Process: "main-virtual"}},
		{"private stranger", packets.Caller{Channel: "qq:private:666", Speaker: "alice", SpeakerID: "qq:666", Kind: "private", Process: "main-virtual"}},
		{"owner", packets.Caller{Channel: "home", Speaker: "alice", SpeakerID: "qq:1", Kind: "private", Process: "main-virtual"}},
	}
	specs := reg.List()
	if len(specs) < 15 {
		t.Fatalf("only %d tools registered", len(specs))
	}
	// counts[speaker][outcome]; cells[tool][speaker] is a short summary.
	counts := map[string]map[string]int{}
	cells := map[string]map[string]string{}
	ownerGot := map[string]bool{}
	ctx := context.Background()
	for _, sp := range speakers {
		if sp.name == "owner" {
			r.checkUnchanged(t)
		}
		counts[sp.name] = map[string]int{}
		for _, s := range specs {
			if cells[s.Name] == nil {
				cells[s.Name] = map[string]string{}
			}
			var cell []string
			for _, kind := range dataKinds {
				if sp.name == "owner" && slices.Contains(s.Effects, packets.EffectWrite) || sp.name == "owner" && slices.Contains(s.Effects, packets.EffectSelfEdit) {
					cell = append(cell, "-")
					continue // the owner may change their own things; not tried here
				}
				leaked, got, ran, errs, denials, calls := false, false, 0, 0, 0, 0
				for _, a := range r.argsFor(s, kind) {
					calls++
					b, _ := json.Marshal(a)
					var o tools.Outcome
					if sp.name == "owner" {
						o = reg.CallAsOwner(ctx, sp.caller, s.Name, b)
					} else {
						o = reg.Call(ctx, sp.caller, s.Name, b)
					}
					text := o.Text() + " " + o.Error
					for k, mark := range r.marks {
						if !strings.Contains(text, mark) {
							continue
						}
						if sp.name != "owner" || k == dataSymlink {
							t.Errorf("%s got %s through %s %s:\n%.400s", sp.name, k, s.Name, b, text)
							leaked = true
						} else {
							ownerGot[s.Name+"/"+k], got = true, true
						}
					}
					switch {
					case o.Decision == packets.Deny:
						denials++
					case o.Error != "":
						errs++
					default:
						ran++
					}
				}
				counts[sp.name]["calls"] += calls
				outcome := "n"
				switch {
				case leaked:
					outcome = "L"
				case got:
					outcome = "o"
				case denials == calls:
					outcome = "d"
				case ran == 0:
					outcome = "r"
				}
				counts[sp.name][outcome]++
				cell = append(cell, outcome)
			}
			cells[s.Name][sp.name] = strings.Join(cell, "")
		}
	}
	// The owner does read what is theirs, through the confined code.
	for _, want := range []string{"read_file/" + dataFiles, "component/" + dataComponent, "theory/" + dataMemory, "open/" + dataMemory} {
		if !ownerGot[want] {
			t.Errorf("the owner did not get %s: the rig is not testing what it claims (got %v)", want, ownerGot)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tool × speaker × data (files, component, symlinks out, memory): d every call denied, r refused by the tool,\n"+
		"n ran and gave nothing of the owner's, o the owner got their own data, L leaked, - not tried\n")
	fmt.Fprintf(&b, "%-18s %-10s %-16s %-14s\n", "tool", "owner", "private stranger", "group stranger")
	for _, s := range specs {
		c := cells[s.Name]
		fmt.Fprintf(&b, "%-18s %-10s %-16s %-14s\n", s.Name, c["owner"], c["private stranger"], c["group stranger"])
	}
	for _, sp := range speakers {
		fmt.Fprintf(&b, "%s: %v\n", sp.name, counts[sp.name])
	}
	t.Log("\n" + b.String())
}

// checkUnchanged fails when a stranger changed any of the owner's files
// or memory.
func (r *strangerRig) checkUnchanged(t *testing.T) {
	t.Helper()
	for p, body := range r.files {
		if b, err := os.ReadFile(p); err != nil || string(b) != body {
			t.Errorf("%s changed: %q %v", p, b, err)
		}
	}
	if th, err := r.d.events.Theory(r.theory); err != nil || !strings.Contains(th.Article, r.marks[dataMemory]) || th.Version != 1 {
		t.Errorf("the owner's theory changed: %+v %v", th, err)
	}
	if _, err := r.d.mem.Get(r.item); err != nil {
		t.Errorf("the owner's workspace item: %v", err)
	}
	owner := memory.Viewer{Channel: "home", Owner: true, Private: true, Perm: r.d.tools.reg.OwnerPermission()}
	plans := r.d.mem.Plans(owner)
	if !slices.ContainsFunc(plans, func(p memory.Plan) bool { return p.ID == r.plan }) {
		t.Errorf("the owner's plan is gone: %+v", plans)
	}
}

// needSandbox skips without bubblewrap (the terminal's cells need it).
func needSandbox(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil && os.Getenv("CYAN_REQUIRE_TOOLS") != "1" {
		t.Skip("bwrap is not installed")
	}
}
