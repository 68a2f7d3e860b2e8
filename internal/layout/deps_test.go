package layout

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// layer is each package's place in SPEC §1's one-way order, lowest
// first: a package may depend, directly or through others, only on
// packages of lower layers. Below everything, at -1, the one pattern
// matcher (glob), the one clock and cron dialect (clock) and the registry
// the platforms and voices declare themselves in (registry). The leaves
// (value types, the event log, the retry delay, the notation, the persona,
// the page) are at 0; the store (on the event log), the LLM client and the
// config at 1; what is built on them at 2 (the turn's value types, the
// router, the supervisor, the voice, archives and metrics among them); the
// parts (memory, events, tools, recall, the bridge…) at 3; main-virtual,
// the observers and the API, peers that never import each other, and the
// bridges' platforms at 4; the daemon that builds and wires them at 6; the
// command line above it.
var layer = map[string]int{
	"glob": -1, "clock": -1, "registry": -1, "packets": 0, "journal": 0, "backoff": 0, "notation": 0, "persona": 0, "internal/clocktest": 0, "internal/browsertest": 0, "internal/embedtest": 0,
	"llm": 1, "store": 1, "config": 1,
	"generate": 2, "importer": 2, "turn": 2, "supervise": 2, "router": 2, "internal/llmtest": 2, "tts": 2, "web": 0,
	"internal/ttstest": 3, "persona/lorebook": 1, "persona/vrm": 0, "persona/card": 2,
	"script": 3, "memory": 3, "events": 3, "tools": 3, "limitproc": 3, "recall": 3,
	"mainvirtual": 4, "observer": 4, "internal/scripttest": 4,
	"bridge": 3, "internal/onebottest": 0, "internal/tgtest": 0, "internal/bridgetest": 4,
	"api":    4,
	"daemon": 6,
	"cmd":    7, "cmd/cyan": 8,
	"internal/e2e": 9, "internal/layout": 9,
	"internal/smallfs": 0, "internal/testexit": 0, "archive": 2,
	"internal/doccheck": 0, "metrics": 2, "internal/crash": 3,
	"recall/internal/glovegen": 0,
	"recall/internal/kindsgen": 0,
	"recall/internal/irregen":  0,
}

// platformLayer is the layer of a chat platform's package (bridge/<x>),
// above bridge; a new platform needs no entry.
const platformLayer = 4

// layerOf is a package's layer; a platform package without an entry is at
// platformLayer.
func layerOf(name string) (int, bool) {
	if l, ok := layer[name]; ok {
		return l, true
	}
	if _, isPlatform := rulesOf(name); isPlatform && strings.HasPrefix(name, "bridge/") {
		return platformLayer, true
	}
	return 0, false
}

// listed is one package as go list -deps -json describes it.
type listed struct {
	ImportPath string
	Dir        string
	Imports    []string
	Deps       []string
	Module     *struct{ Path string }
}

// goList lists every package of the module with its transitive
// dependencies (non-test code only, as the binary links it). It asks go
// list for only the fields of listed, which spares it the rest.
func goList(t *testing.T, root string) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Dir,Imports,Deps,Module", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(p.ImportPath, module) {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs
}

func ours(paths []string) []string {
	var out []string
	for _, p := range paths {
		if d, ok := strings.CutPrefix(p, module); ok {
			out = append(out, d)
		}
	}
	return out
}

// TestDependenciesFollowTheLayers checks every package's transitive
// dependencies (go list -deps), not only its imports: nothing reaches up
// or sideways through another package.
func TestDependenciesFollowTheLayers(t *testing.T) {
	for _, p := range goList(t, repoRoot(t)) {
		name := strings.TrimPrefix(p.ImportPath, module)
		own, known := layerOf(name)
		if !known {
			t.Errorf("package %s has no layer in %s; give it one", name, "internal/layout")
			continue
		}
		for _, d := range ours(p.Deps) {
			if l, ok := layerOf(d); ok && l >= own {
				t.Errorf("%s (layer %d) depends on %s (layer %d), through %v: dependencies go one way, down", name, own, d, l, ours(p.Imports))
			}
		}
	}
}

var (
	mayImport   = regexp.MustCompile(`It may import ([^.]*)\.`)
	importsNone = regexp.MustCompile(`It imports nothing of cyan's`)
	listSplit   = regexp.MustCompile(`,\s*|\s+and\s+`)
)

// TestDocsAreTrueToTheTable: every package comment says what the package
// may import, in one sentence — "It may import a, b and c." (or "It may
// import every cyan package", "It imports nothing of cyan's.") — and the
// sentence lists exactly the table's packages.
func TestDocsAreTrueToTheTable(t *testing.T) {
	root := repoRoot(t)
	for dir, files := range packages(t, root) {
		rules, _ := rulesOf(dir)
		var doc string
		for _, f := range files {
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if af.Doc != nil {
				doc += strings.Join(strings.Fields(af.Doc.Text()), " ") + " "
			}
		}
		switch m := mayImport.FindAllStringSubmatch(doc, -1); {
		case slices.Contains(rules, "*"):
			if !strings.Contains(doc, "It may import every cyan package") {
				t.Errorf("%s: its doc should say \"It may import every cyan package\"", dir)
			}
		case len(rules) == 0:
			if !importsNone.MatchString(doc) || len(m) > 0 {
				t.Errorf("%s: the table lets it import nothing of cyan's; its doc should say \"It imports nothing of cyan's.\"", dir)
			}
		case len(m) != 1:
			t.Errorf("%s: its doc should say once \"It may import %s.\" (found %d such sentences)", dir, sentence(rules), len(m))
		default:
			var said []string
			for _, w := range listSplit.Split(m[0][1], -1) {
				if w = strings.TrimSpace(w); w != "" {
					said = append(said, w)
				}
			}
			want := slices.Clone(rules)
			sort.Strings(said)
			sort.Strings(want)
			if !slices.Equal(said, want) {
				t.Errorf("%s: its doc says \"It may import %s.\"; the table says \"It may import %s.\"", dir, m[0][1], sentence(rules))
			}
		}
	}
}

// sentence lists names as the doc sentence does: "a, b and c".
func sentence(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
