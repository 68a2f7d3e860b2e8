package web_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/web"
)

// TestPathsAreThePage: Paths names "/" and every file of the page, each
// served with the CSP, and nothing else.
func TestPathsAreThePage(t *testing.T) {
	t.Parallel()
	paths := web.Paths()
	var files []string
	fs.WalkDir(web.Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if len(paths) != len(files) || paths[0] != "/" {
		t.Fatalf("Paths %q for the files %q", paths, files)
	}
	h := web.Handler()
	for _, p := range paths {
		if p != "/" && (!strings.HasPrefix(p, "/app/") || strings.HasSuffix(p, "/")) {
			t.Errorf("%q is not a file under /app/", p)
		}
		if p != "/" && !slices.Contains(files, strings.TrimPrefix(p, "/")) {
			t.Errorf("%q is not one of the files", p)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Security-Policy") != web.CSP || rec.Body.Len() == 0 {
			t.Errorf("GET %s: %d, CSP %q, %d bytes", p, rec.Code, rec.Header().Get("Content-Security-Policy"), rec.Body.Len())
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if !strings.Contains(rec.Body.String(), `<script type="module" src="/app/main.js">`) {
		t.Errorf("/ is not index.html")
	}
}
