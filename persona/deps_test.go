package persona

import (
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package to the standard library, yaml and fsnotify,
// and checks that it has a package doc comment.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"go.yaml.in/yaml/v3":           true,
		"github.com/fsnotify/fsnotify": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	documented := false
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, name, nil, goparser.ImportsOnly|goparser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package persona ") {
			documented = true
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			std := !strings.Contains(strings.Split(path, "/")[0], ".")
			if !std && !allowed[path] {
				t.Errorf("%s imports %s: persona may import only the standard library, yaml and fsnotify", name, path)
			}
		}
	}
	if !documented {
		t.Error("no file has a \"Package persona …\" doc comment")
	}
}
