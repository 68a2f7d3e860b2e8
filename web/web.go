package web

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed static
var files embed.FS

// CSP keeps the page to its own origin: scripts, styles, audio, images
// and connections come from the daemon or nowhere.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"media-src 'self' blob:; connect-src 'self' blob:; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Files is the page's file tree (index.html and app/…).
func Files() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	return sub
}

// Paths are the URL paths the page is made of: "/" (index.html) and each
// of its files under /app/. Nothing else is the page's.
func Paths() []string {
	paths := []string{"/"}
	err := fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "index.html" {
			return err
		}
		paths = append(paths, "/"+p)
		return nil
	})
	if err != nil {
		panic(err) // an embedded tree cannot fail to walk
	}
	return paths
}

// Handler serves the page: / is index.html, /app/… its modules and
// styles. Every answer carries the CSP and asks the browser to revalidate,
// so an upgraded daemon serves its new page at once.
func Handler() http.Handler {
	fsrv := http.FileServerFS(Files())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if r.URL.Path == "/" {
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/index.html"
			serveIndex(w, r2)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		fsrv.ServeHTTP(w, r)
	})
}

func serveIndex(w http.ResponseWriter, r *http.Request) {
	b, err := fs.ReadFile(Files(), "index.html")
	if err != nil {
		http.Error(w, "the page is missing from this build", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}
