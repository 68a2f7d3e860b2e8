package api

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/bridge/onebot"
	"github.com/cyan-agent/cyan/bridge/telegram"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/doccheck"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/metrics"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/web"
)

// apiDocPath is the HTTP reference this file holds to the routes.
const apiDocPath = "../docs/http-api.md"

// registration is one call that routes a pattern on the server's mux, as
// the package's source makes it.
type registration struct {
	pattern string // "" when the pattern is not a constant
	fn      string // the function that makes the call
	where   string
}

// muxRegistrations reads every non-test file of the package and lists the
// calls to <x>.mux.Handle and <x>.mux.HandleFunc, their patterns evaluated
// from string literals and the package's string constants.
func muxRegistrations(t *testing.T) []registration {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	consts := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, af)
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[n.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
		}
	}
	var eval func(e ast.Expr) (string, bool)
	eval = func(e ast.Expr) (string, bool) {
		switch x := e.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				s, err := strconv.Unquote(x.Value)
				return s, err == nil
			}
		case *ast.Ident:
			s, ok := consts[x.Name]
			return s, ok
		case *ast.BinaryExpr:
			if x.Op == token.ADD {
				a, ok1 := eval(x.X)
				b, ok2 := eval(x.Y)
				return a + b, ok1 && ok2
			}
		case *ast.ParenExpr:
			return eval(x.X)
		}
		return "", false
	}
	var out []registration
	for _, af := range parsed {
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") {
					return true
				}
				recv, ok := sel.X.(*ast.SelectorExpr)
				if !ok || recv.Sel.Name != "mux" {
					return true
				}
				p, _ := eval(call.Args[0])
				out = append(out, registration{pattern: p, fn: fd.Name.Name, where: fset.Position(call.Pos()).String()})
				return true
			})
		}
	}
	return out
}

// fullRig is a server with every optional part, so every route the
// package can register is registered; the bridges' paths are mounted as
// the daemon mounts them.
func fullRig(t *testing.T) *rig {
	t.Helper()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	hook := telegram.WebhookPath("tg")
	return newRig(t, func(o *Options) {
		mem, err := memory.Open(memory.Options{Store: o.Store, Config: config.Defaults().Memory})
		if err != nil {
			t.Fatal(err)
		}
		o.Memory = mem
		o.Observers = noObservers{}
		o.Metrics = metrics.New()
		o.Page, o.PagePaths = web.Handler(), web.Paths()
		o.Mount = map[string]http.Handler{onebot.ReversePath: ok, onebot.ReversePath + "/": ok, hook: ok}
		o.Doors = []Door{{Path: onebot.ReversePath, Access: OwnAuth}, {Path: onebot.ReversePath + "/", Access: OwnAuth}, {Path: hook, Access: OwnAuth}}
	})
}

type noObservers struct{}

func (noObservers) Status() []packets.ObserverStatus   { return nil }
func (noObservers) Call(context.Context, string) error { return nil }

var wildcard = regexp.MustCompile(`\{([a-z_]*)(\.\.\.)?\}`)

// concretePath fills a pattern's wildcards ({id} → id1, {path...} → a/b.js,
// {$} → nothing).
func concretePath(path string) string {
	return wildcard.ReplaceAllStringFunc(path, func(w string) string {
		m := wildcard.FindStringSubmatch(w)
		switch {
		case m[1] == "":
			return ""
		case m[2] != "":
			return "a/b.js"
		}
		return m[1] + "1"
	})
}

// served is the pattern the real mux routes method and path to.
func served(s *Server, method, path string) string {
	req := httptest.NewRequest(method, concretePath(path), nil)
	_, pattern := s.mux.Handler(req)
	return pattern
}

// docRoute is a row of a route table of the doc.
type docRoute struct {
	method, path, who string
	line              int
}

func docRoutes(d *doccheck.Doc) ([]docRoute, []error) {
	var out []docRoute
	var errs []error
	for _, tab := range d.Tables() {
		rc, wc := tab.Column("route"), tab.Column("who")
		if rc < 0 {
			continue
		}
		if wc < 0 {
			errs = append(errs, fmt.Errorf("%s: a route table needs a who column", d.Where(tab.Line)))
			continue
		}
		for _, r := range tab.Rows {
			code, ok := doccheck.Code(r.Cells[rc])
			method, path, ok2 := strings.Cut(code, " ")
			if !ok || !ok2 || !strings.HasPrefix(path, "/") || strings.ToUpper(method) != method || len(r.Cells) <= wc {
				errs = append(errs, fmt.Errorf("%s: the route cell %q is not `METHOD /path`", d.Where(r.Line), r.Cells[rc]))
				continue
			}
			out = append(out, docRoute{method: method, path: path, who: r.Cells[wc], line: r.Line})
		}
	}
	return out, errs
}

// whoWords are the words the who column starts with, by the guard's
// access of the path.
var whoWords = map[Access]string{Public: "anyone", OwnAuth: "its own credentials", OwnerOnly: "owner"}

// checkAPIDoc compares the doc's route tables with the server: every
// route it lists is what the real mux routes that method and path to,
// every registration (read from the source) is listed, and the who column
// says the access the guard gives the path.
func checkAPIDoc(d *doccheck.Doc, s *Server, regs []registration) []error {
	routes, errs := docRoutes(d)
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	documented := map[string]int{}
	for _, rt := range routes {
		pattern := rt.method + " " + rt.path
		if prev, dup := documented[pattern]; dup {
			bad("%s: %s is listed already at line %d", d.Where(rt.line), pattern, prev)
		}
		documented[pattern] = rt.line
		want := pattern
		switch {
		case rt.path == "/":
			want = "GET /{$}" // the page's index, and nothing below it
		case strings.HasPrefix(rt.path, onebot.ReversePath+"/"):
			want = onebot.ReversePath + "/"
		case rt.path == onebot.ReversePath:
			want = onebot.ReversePath
		case rt.path == telegram.WebhookPath("{name}"):
			want = telegram.WebhookPath("tg")
			rt.path = want
		case rt.path == "/app/{path...}":
			for _, p := range web.Paths() {
				if p == "/" {
					continue // GET / above
				}
				if !strings.HasPrefix(p, "/app/") {
					bad("the page serves %s, outside /app/: list it in %s", p, d.Path)
				}
				if got := served(s, "GET", p); got != "GET "+p {
					bad("the page's file %s is routed to %q", p, got)
				}
			}
			if got := whoWords[s.access("/app/main.js")]; !strings.HasPrefix(rt.who, got) {
				bad("%s: who may call %s: the doc says %q, the guard %q", d.Where(rt.line), pattern, rt.who, got)
			}
			continue
		}
		if got := served(s, rt.method, rt.path); got != want {
			bad("%s: %s is not served: the mux routes it to %q", d.Where(rt.line), pattern, got)
		}
		if got := whoWords[s.access(concretePath(rt.path))]; !strings.HasPrefix(rt.who, got) {
			bad("%s: who may call %s: the doc says %q, the guard gives %q", d.Where(rt.line), pattern, rt.who, got)
		}
	}
	var dynamic []string
	for _, reg := range regs {
		switch {
		case reg.pattern == "":
			dynamic = append(dynamic, reg.fn)
			continue
		case reg.pattern == "/":
			// The catch-all: a JSON 404 that names the method and path.
			if got := served(s, "GET", "/no/such/route"); got != "/" {
				bad("an unknown path is routed to %q, not the 404 at %s", got, reg.where)
			}
			continue
		}
		f := strings.Fields(reg.pattern)
		if got := served(s, f[0], f[len(f)-1]); got != reg.pattern {
			bad("%s registers %q, but the full server routes it to %q (is it behind an option fullRig does not set?)", reg.where, reg.pattern, got)
		}
		if _, ok := documented[reg.pattern]; !ok {
			bad("%s serves %s, which %s does not list: add a row", reg.where, reg.pattern, d.Path)
		}
	}
	// The routes not known at compile time: the mounted bridge paths
	// (checked above against the bridges' own paths) and the page's files.
	slices.Sort(dynamic)
	if want := []string{"New", "routePage"}; !slices.Equal(dynamic, want) {
		bad("the routes made from variables are registered in %q, want %q: a new one needs a row in %s and a case in this test", dynamic, want, d.Path)
	}
	for _, p := range []string{"GET " + onebot.ReversePath, "GET " + onebot.ReversePath + "/{name}", "POST " + telegram.WebhookPath("{name}"), "GET /", "GET /app/{path...}"} {
		if _, ok := documented[p]; !ok {
			bad("%s does not list %s", d.Path, p)
		}
	}
	return append(errs, d.CheckTOC(2)...)
}

// TestHTTPAPIDocIsTrue holds docs/http-api.md to the routes: every route
// the doc lists is what the real mux routes that method and path to, every
// route the package registers (read from its source, so a new route
// counts) is in the doc, and the who column says the access the guard
// gives the path.
func TestHTTPAPIDocIsTrue(t *testing.T) {
	d, err := doccheck.Read(apiDocPath)
	if err != nil {
		t.Fatal(err)
	}
	regs := muxRegistrations(t)
	if len(regs) < 40 {
		t.Fatalf("found only %d registrations in the source", len(regs))
	}
	for _, err := range checkAPIDoc(d, fullRig(t).server, regs) {
		t.Error(err)
	}
}

// TestHTTPAPIDocCheckFails: the check finds each kind of drift in a copy
// of the doc — a route removed, a route the server does not have, a wrong
// who — and a registration the source makes that the doc lacks.
func TestHTTPAPIDocCheckFails(t *testing.T) {
	d, err := doccheck.Read(apiDocPath)
	if err != nil {
		t.Fatal(err)
	}
	s := fullRig(t).server
	regs := muxRegistrations(t)
	text := strings.Join(d.Lines, "\n")
	cases := []struct {
		name, from, to, want string
		regs                 []registration
	}{
		{name: "missing", from: "| `GET /api/v1/relations` |", to: "| `GET /api/v1/relationz` |", want: "serves GET /api/v1/relations, which"},
		{name: "not served", from: "| `POST /api/v1/greeting` |", to: "| `POST /api/v1/greetings` |", want: "POST /api/v1/greetings is not served"},
		{name: "wrong method", from: "| `DELETE /api/v1/memory/{id}` |", to: "| `PUT /api/v1/memory/{id}` |", want: "PUT /api/v1/memory/{id} is not served"},
		{name: "who", from: "| `GET /api/v1/theories` | owner |", to: "| `GET /api/v1/theories` | anyone |", want: "the doc says \"anyone\", the guard gives \"owner\""},
		{name: "public", from: "| `GET /healthz` | anyone |", to: "| `GET /healthz` | owner |", want: "the guard gives \"anyone\""},
		{name: "new route", regs: append(slices.Clone(regs), registration{pattern: "GET /api/v1/memory", fn: "New", where: "new.go:1"},
			registration{pattern: "GET /api/v1/secret", fn: "New", where: "new.go:2"}), want: "new.go:2 serves GET /api/v1/secret, which"},
		{name: "new dynamic route", regs: append(slices.Clone(regs), registration{fn: "mountMore", where: "new.go:3"}), want: "a new one needs a row"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(text, c.from) {
				t.Fatalf("the doc has no %q to change", c.from)
			}
			r := regs
			if c.regs != nil {
				r = c.regs
			}
			errs := checkAPIDoc(doccheck.Parse(apiDocPath, strings.Replace(text, c.from, c.to, 1)), s, r)
			if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), c.want) }) {
				t.Errorf("errors %v, want one saying %q", errs, c.want)
			}
		})
	}
}
