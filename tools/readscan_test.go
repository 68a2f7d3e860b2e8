package tools

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// readCalls are the calls that read (or look at) the file system without
// the confined-path code.
var readCalls = map[string][]string{
	"os":       {"ReadFile", "Open", "OpenFile", "ReadDir", "DirFS", "Readlink", "Stat", "Lstat", "OpenRoot", "OpenInRoot"},
	"ioutil":   {"ReadFile", "ReadDir", "ReadAll"},
	"filepath": {"Walk", "WalkDir", "Glob"},
}

// confinedFiles are the confined-path code: Paths (the roots of the file
// tools) and Folder (a component's folder).
var confinedFiles = []string{"tools/paths.go", "tools/folder.go"}

// readsAllowed are the other places of the packages that export tools
// allowed to read with the plain os package, each with why it reads no
// file for a caller.
var readsAllowed = map[string]string{
	"tools/sandbox.go:Wrap":             "looks at /bin, /lib… to build the sandbox's own file system",
	"tools/sandbox.go:masks":            "walks the roots to find the credential files to cover",
	"tools/sandbox.go:isKey":            "reads a root file's first bytes to cover it when it holds a key",
	"tools/limits.go:pidNamespace":      "reads /proc for the sandbox's PID namespace",
	"tools/limits.go:sampleRun":         "reads /proc to count the sandbox's processes, their memory and writes",
	"tools/memcap_linux.go:memParents":  "reads /proc/self/cgroup and looks at /sys/fs/cgroup for the sandbox's memory cgroup",
	"tools/memcap_linux.go:oomKills":    "reads the sandbox's memory cgroup's events",
	"tools/pidcap_linux.go:pidsParents": "reads /proc/self/cgroup and looks at /sys/fs/cgroup for the sandbox's pids cgroup",
	"tools/pidcap_linux.go:refused":     "reads the sandbox's pids cgroup's events",
	"tools/extras.go:reload":            "loads the manifests of cyan's own extra folders (data dir), not for a caller",
	"tools/extras.go:checkScript":       "parses a script tool's file next to its manifest through os.Root",
	"tools/extras.go:scriptRun":         "reads a script tool's file next to its manifest through os.Root",
	"recall/vectors.go:save":            "recall's own index file in the data dir",
	"recall/lexsnap.go:readLexical":     "recall's own lexical snapshot in the data dir",
	"recall/lexsnap.go:writeLexical":    "writes recall's own lexical snapshot in the data dir",
	"recall/vecfile.go:createVecFile":   "makes recall's own vector file in the data dir",
	"recall/vecfile.go:openVecFile":     "opens recall's own vector file in the data dir",
	"recall/vecload.go:removeVecFiles":  "lists recall's own vector files in the data dir to remove other embedders'",
	"recall/bench.go:procStatus":        "cyan bench reads its own /proc/self/status",
	"recall/bench.go:loadAvg":           "cyan bench reads /proc/loadavg",
	"recall/bench.go:benchRestart":      "cyan bench recall --profile copies its own /proc/self/smaps",
}

// A tool reads the owner's files only through the confined-path code:
// every read of the plain os package in the packages that export tools
// (tools, memory, events, recall and the daemon's tool wiring) is in
// paths.go, folder.go or listed above with its reason. A new tool that
// calls os.ReadFile fails here.
func TestToolsReadOnlyThroughConfinedPaths(t *testing.T) {
	var files []string
	for _, g := range []string{"*.go", "../memory/*.go", "../events/*.go", "../recall/*.go", "../daemon/tools.go", "../daemon/recall.go", "../daemon/events.go"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	var found []string
	used := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		name := strings.TrimPrefix(filepath.ToSlash(f), "../")
		if !strings.Contains(name, "/") {
			name = "tools/" + name
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok || !slices.Contains(readCalls[pkg.Name], sel.Sel.Name) {
					return true
				}
				where := name + ":" + fn.Name.Name
				switch {
				case slices.Contains(confinedFiles, name):
				case readsAllowed[where] != "":
					used[where] = true
				default:
					found = append(found, fset.Position(sel.Pos()).String()+": "+pkg.Name+"."+sel.Sel.Name+" in "+fn.Name.Name)
				}
				return true
			})
		}
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("%s reads with the plain os package: read through Paths or Folder (folder.go), or list it in readsAllowed with the reason it reads nothing for a caller", f)
	}
	for where, why := range readsAllowed {
		if why != "" && !used[where] {
			t.Errorf("readsAllowed lists %s, which no longer reads: remove it", where)
		}
	}
}
