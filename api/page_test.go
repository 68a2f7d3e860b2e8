package api

import (
	"net/http"
	"strings"
	"testing"
)

// TestPageDoorsOnATokenBind: with a token required, the page's own paths
// open without it, and nothing else does.
func TestPageDoorsOnATokenBind(t *testing.T) {
	const token = "0123456789abcdef0123"
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("page " + r.URL.Path))
	})
	r := newRig(t, func(o *Options) {
		o.Token, o.CheckHost = token, false
		o.Page, o.PagePaths = page, []string{"/", "/app/main.js", "/app/style.css"}
		// A door on the root opens the root alone.
		o.Doors = []Door{{Path: "/", Access: Public}}
	})
	for _, tc := range []struct {
		name   string
		method string
		path   string
		hdr    []string
		want   int
	}{
		{"the index", "GET", "/", nil, 200},
		{"the index with a query", "GET", "/?channel=desktop", nil, 200},
		{"the index, HEAD", "HEAD", "/", nil, 200},
		{"a file of the page", "GET", "/app/main.js", nil, 200},
		{"another file of the page", "GET", "/app/style.css", nil, 200},
		{"a file the page does not have", "GET", "/app/other.js", nil, 401},
		{"the page's folder", "GET", "/app/", nil, 401},
		{"the API", "GET", "/api/v1/messages?channel=desktop", nil, 401},
		{"the persona", "GET", "/api/v1/persona", nil, 401},
		{"the greeting", "POST", "/api/v1/greeting", []string{"Content-Type", "application/json"}, 401},
		{"a voice's audio", "GET", "/api/v1/speech/0123", nil, 401},
		{"the stream", "GET", "/api/v1/stream?channel=desktop", nil, 401},
		{"the OpenAI routes", "GET", "/v1/models", nil, 401},
		{"dot segments out of the page", "GET", "/app/../api/v1/messages", nil, 401},
		{"a double slash", "GET", "//api/v1/messages", nil, 401},
		{"an unknown path", "GET", "/index.html", nil, 401},
		{"the page from another origin's script", "GET", "/app/main.js", []string{"Origin", "http://evil.example"}, 403},
		{"a link from another site opens the page", "GET", "/", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate"}, 200},
		{"but another site cannot read it", "GET", "/", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "cors"}, 403},
		{"the API with the token", "GET", "/api/v1/messages?channel=desktop", []string{"Authorization", "Bearer " + token}, 200},
	} {
		code, out := send(t, r.srv.URL, tc.method, tc.path, "", nil, tc.hdr)
		if code != tc.want {
			t.Errorf("%s: %s %s → %d %s; want %d", tc.name, tc.method, tc.path, code, out, tc.want)
		}
		if code == 200 && tc.method == "GET" && strings.HasPrefix(tc.path, "/") && !strings.HasPrefix(tc.path, "/api/") && !strings.HasPrefix(out, "page ") {
			t.Errorf("%s: %q is not the page", tc.name, out)
		}
	}
	// A POST to the page's path is no way around the token.
	if code, out := send(t, r.srv.URL, "POST", "/", "application/json", strings.NewReader("{}"), nil); code/100 == 2 {
		t.Errorf("POST /: %d %s", code, out)
	}
}

func TestPagePathsAreChecked(t *testing.T) {
	page := http.NotFoundHandler()
	for _, tc := range []struct {
		name  string
		paths []string
	}{
		{"none", nil},
		{"a folder", []string{"/", "/app/"}},
		{"relative", []string{"app/main.js"}},
		{"inside the API", []string{"/", "/api/v1/messages"}},
		{"inside the OpenAI routes", []string{"/v1/models"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr := newRig(t, nil)
			o := rr.server.o
			o.Page, o.PagePaths = page, tc.paths
			if _, err := New(o); err == nil {
				t.Fatalf("New accepted the page paths %q", tc.paths)
			}
		})
	}
}
