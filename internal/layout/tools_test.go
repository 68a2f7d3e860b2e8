package layout

import (
	"go/ast"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneToolConvention: a model tool is exported one way — a packets.Tool
// (packets.ToolSpec and a run function taking *packets.ToolCall) — and
// the daemon hands every part's tools to the registry in one loop
// (tools.Registry.RegisterAll). A package that declares a tool type of its
// own (a struct embedding packets.ToolSpec, or a function type or field
// that runs a call with another signature), or a daemon file that
// registers tools one by one through an adapter, fails here.
func TestOneToolConvention(t *testing.T) {
	root := repoRoot(t)
	registerAll := 0
	for _, pf := range parseAll(t, root) {
		dir, af := pf.dir, pf.file
		rel, _ := filepath.Rel(root, pf.path)
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.StructType:
				if dir == "packets" {
					return true
				}
				spec, run := false, false
				for _, fld := range n.Fields.List {
					if len(fld.Names) == 0 && isSelector(fld.Type, "packets", "ToolSpec") {
						spec = true
					}
					if _, ok := fld.Type.(*ast.FuncType); ok {
						run = true
					}
				}
				if spec && run {
					t.Errorf("%s declares a tool type of its own (packets.ToolSpec and a run function); export packets.Tool values instead", rel)
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || dir != "daemon" {
					return true
				}
				switch sel.Sel.Name {
				case "RegisterAll":
					registerAll++
				case "Register":
					if len(n.Args) != 1 || !isToolValue(n.Args[0]) && !strings.Contains(strings.ToLower(exprName(sel.X)), "reg") {
						return true
					}
					t.Errorf("%s registers a tool by hand (%s.Register); add the part's tools to the one RegisterAll", rel, exprName(sel.X))
				}
			}
			return true
		})
	}
	if registerAll != 1 {
		t.Errorf("daemon calls RegisterAll %d times; the registry takes every part's tools in one loop", registerAll)
	}
}

// isToolValue reports whether e is a packets.Tool or tools.Tool literal.
func isToolValue(e ast.Expr) bool {
	cl, ok := e.(*ast.CompositeLit)
	return ok && (isSelector(cl.Type, "packets", "Tool") || isSelector(cl.Type, "tools", "Tool"))
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}

func exprName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprName(e.X) + "." + e.Sel.Name
	}
	return "?"
}
