package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/cyan-agent/cyan/"

// allowed lists, for each package, the cyan packages its non-test code may
// import. Dependencies flow one way (SPEC §1), down the layers of
// deps_test.go: cmd → daemon → {mainvirtual, observer, api, the bridges'
// platforms} → {memory, events, tools, recall, limitproc, script, bridge}
// → {generate, turn, router, supervise, tts, importer, archive, metrics} →
// {store, llm, config} → {packets, journal, backoff, notation, persona},
// with glob, clock and registry (where platforms and voices declare
// themselves) below everything. The store is not a leaf: it
// stands on the journal (its arrival log posts there); persona is one.
var allowed = map[string][]string{
	"glob":                 {},
	"clock":                {},
	"registry":             {},
	"packets":              {"glob"},
	"journal":              {"glob"},
	"backoff":              {},
	"router":               {"journal", "backoff", "store", "glob", "packets"},
	"supervise":            {"backoff", "journal", "clock"},
	"config":               {"packets", "glob", "clock", "registry"},
	"llm":                  {"backoff"},
	"persona":              {},
	"persona/lorebook":     {"notation"},
	"persona/vrm":          {},
	"persona/card":         {"persona", "persona/lorebook"},
	"store":                {"journal"},
	"generate":             {"llm", "store"},
	"script":               {"generate", "llm"},
	"memory":               {"store", "config", "packets", "llm", "notation", "journal", "clock", "turn"},
	"events":               {"store", "config", "packets", "llm", "notation", "journal", "backoff", "clock", "turn"},
	"tools":                {"store", "llm", "config", "packets", "persona", "notation", "journal", "backoff", "tts", "glob", "turn"},
	"limitproc":            {"config", "packets", "glob", "llm", "turn"},
	"observer":             {"memory", "events", "tools", "llm", "config", "packets", "store", "journal", "clock", "turn"},
	"mainvirtual":          {"store", "persona", "persona/lorebook", "llm", "config", "notation", "journal", "packets", "turn"},
	"notation":             {},
	"recall":               {"store", "importer", "packets", "llm", "journal", "backoff", "notation"},
	"importer":             {"store"},
	"tts":                  {"config", "packets", "glob", "journal", "registry"},
	"api":                  {"turn", "tools", "packets", "events", "generate", "store", "llm", "config", "memory", "recall", "importer", "journal", "router", "supervise", "tts", "bridge", "archive", "metrics", "glob", "persona", "persona/vrm"},
	"turn":                 {"store", "llm", "packets"},
	"daemon":               {"*"},
	"cmd":                  {"*"},
	"cmd/cyan":             {"cmd"},
	"bridge":               {"router", "journal", "store", "config", "notation", "clock", "registry", "llm"},
	"bridge/onebot":        platformRules,
	"bridge/telegram":      platformRules,
	"internal/onebottest":  {},
	"internal/bridgetest":  {"bridge", "router"},
	"internal/tgtest":      {},
	"internal/llmtest":     {"llm"},
	"internal/embedtest":   {},
	"internal/doccheck":    {},
	"internal/scripttest":  {"script", "generate", "llm", "store", "internal/llmtest"},
	"internal/clocktest":   {},
	"internal/browsertest": {},
	"internal/ttstest":     {"tts"},
	"internal/e2e":         {},
	"internal/layout":      {},
	"web":                  {},
	"internal/smallfs":     {},
	"internal/testexit":    {},
	// recall/internal/glovegen writes recall's GloVe table, by hand.
	"recall/internal/glovegen": {},
	// recall/internal/kindsgen writes recall's table of kinds, by hand.
	"recall/internal/kindsgen": {},
	// recall/internal/irregen writes recall's table of irregular verbs, by hand.
	"recall/internal/irregen": {},
	"archive":                 {"store", "journal", "clock"},
	"metrics":                 {"llm", "store", "journal"},
	"internal/crash":          {"internal/llmtest", "llm"},
}

// platformRules are what a chat platform's package (bridge/<platform>)
// may import: the bridge it adapts to, the config types its section holds,
// the registry it declares itself in, the clock, and the supervisor it
// tells when to try again (supervise.RetryAfter, supervise.Healthy). A new
// platform needs no row: rulesOf gives it these.
var platformRules = []string{"bridge", "config", "registry", "clock", "supervise"}

// rulesOf is a package's row of allowed, or platformRules for a platform
// package without one.
func rulesOf(dir string) ([]string, bool) {
	if r, ok := allowed[dir]; ok {
		return r, true
	}
	if rest, ok := strings.CutPrefix(dir, "bridge/"); ok && !strings.Contains(rest, "/") {
		return platformRules, true
	}
	return nil, false
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s", dir)
	}
	return dir
}

// packages maps each package dir (relative, slash-separated) to its
// non-test Go files.
func packages(t *testing.T, root string) map[string][]string {
	t.Helper()
	return goFiles(t, root, false)
}

// goFiles maps each package dir (relative, slash-separated) to its Go
// files: its test files (tests) or the others.
func goFiles(t *testing.T, root string, tests bool) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && strings.HasSuffix(path, "_test.go") == tests {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			pkgs[filepath.ToSlash(rel)] = append(pkgs[filepath.ToSlash(rel)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func TestEveryPackageHasADocComment(t *testing.T) {
	root := repoRoot(t)
	for dir, files := range packages(t, root) {
		documented := false
		for _, f := range files {
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if af.Doc != nil && strings.HasPrefix(af.Doc.Text(), "Package "+af.Name.Name+" ") || af.Name.Name == "main" && af.Doc != nil {
				documented = true
			}
		}
		if !documented {
			t.Errorf("package %s has no doc comment (\"// Package x …\", in doc.go)", dir)
		}
	}
}

func TestImportsFollowTheLayering(t *testing.T) {
	root := repoRoot(t)
	for dir, files := range packages(t, root) {
		rules, known := rulesOf(dir)
		if !known {
			t.Errorf("package %s is not in the layering table of %s; add it with the packages it may import", dir, "internal/layout")
			continue
		}
		for _, f := range files {
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				dep, ok := strings.CutPrefix(path, module)
				if !ok || slices.Contains(rules, "*") && dep != "cmd" {
					continue
				}
				if !slices.Contains(rules, dep) {
					rel, _ := filepath.Rel(root, f)
					t.Errorf("%s imports %s, which package %s may not import (allowed: %v)", rel, dep, dir, rules)
				}
			}
		}
	}
}

// parsedFile is one non-test Go file of the module, parsed whole.
type parsedFile struct {
	dir, path string // dir as packages names it
	fset      *token.FileSet
	file      *ast.File
}

var parsed struct {
	once  sync.Once
	files []parsedFile
	err   error
}

// parseAll parses every non-test Go file of the module once, for the
// tests that read whole files (the tool convention, the glob matcher):
// each walks the same trees rather than parsing the module again.
func parseAll(t *testing.T, root string) []parsedFile {
	t.Helper()
	pkgs := packages(t, root)
	parsed.once.Do(func() {
		for _, dir := range slices.Sorted(maps.Keys(pkgs)) {
			for _, f := range pkgs[dir] {
				fset := token.NewFileSet()
				af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
				if err != nil {
					parsed.err = err
					return
				}
				parsed.files = append(parsed.files, parsedFile{dir: dir, path: f, fset: fset, file: af})
			}
		}
	})
	if parsed.err != nil {
		t.Fatal(parsed.err)
	}
	return parsed.files
}
