package layout

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// TestOnlyGlobMatchesPatterns: package glob is the one pattern matcher
// (channels, tool names, paths). A package that compiles a glob of its
// own — path.Match or filepath.Match, splitting or rewriting a pattern at
// "*" or "?" — fails here: it would give one pattern two meanings, as
// tts.channels and the router's subscriptions once did ("?" voiced
// streamed replies but not proactive ones).
func TestOnlyGlobMatchesPatterns(t *testing.T) {
	root := repoRoot(t)
	for _, pf := range parseAll(t, root) {
		if pf.dir == "glob" {
			continue
		}
		fset, af := pf.fset, pf.file
		rel, _ := filepath.Rel(root, pf.path)
		ast.Inspect(af, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			fn := pkg.Name + "." + sel.Sel.Name
			switch fn {
			case "path.Match", "filepath.Match":
				t.Errorf("%s:%d calls %s; match patterns with package glob", rel, fset.Position(call.Pos()).Line, fn)
			case "strings.Split", "strings.SplitN", "strings.SplitAfter", "strings.Cut", "strings.ReplaceAll", "strings.Replace", "strings.Fields":
				for _, a := range call.Args[1:] {
					if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if v, _ := strconv.Unquote(lit.Value); v == "*" || v == "?" || v == "**" {
							t.Errorf("%s:%d: %s at %q reads a glob by hand; match patterns with package glob", rel, fset.Position(call.Pos()).Line, fn, v)
						}
					}
				}
			}
			return true
		})
	}
}
