package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/cyan-agent/cyan/internal/browsertest"
)

// hostilePage attacks the API at api from another origin with everything a
// page may do without the API's consent: no-cors fetches with text/plain,
// form-less bodies and credentials, a CORS fetch with JSON (its preflight is
// refused), forms posted as text/plain, urlencoded and multipart into
// hidden frames, and a WebSocket.
const hostilePage = `<!doctype html><title>loading</title><body>
<script>
const api = %q, canary = %q;
const run = JSON.stringify({arguments: {command: "touch " + canary}});
const forged = JSON.stringify({channel: "home", user: "owner", text: "forged by a page"});
const history = JSON.stringify({messages: [{time: "2024-01-01T00:00:00Z", channel: "home", user: "owner", text: "forged history"}]});
const chat = JSON.stringify({messages: [{role: "user", content: "forged"}]});
function form(path, enctype, name, value) {
  return new Promise(done => {
    const frame = document.createElement("iframe");
    frame.name = "f" + Math.random();
    document.body.appendChild(frame); // loads about:blank at once
    frame.onload = () => {
      try { frame.contentWindow.location.href; return; } catch (e) {} // still about:blank, ours
      done("form " + path + " " + enctype); // the API's answer, another origin's page
    };
    const f = document.createElement("form");
    f.method = "POST"; f.action = api + path; f.enctype = enctype; f.target = frame.name;
    const i = document.createElement("input");
    i.name = name; i.value = value; f.appendChild(i);
    document.body.appendChild(f);
    f.submit();
  });
}
function ws(path) {
  return new Promise(done => {
    const s = new WebSocket(api.replace("http", "ws") + path);
    s.onopen = () => { s.send(run); done("ws open " + path); };
    s.onerror = () => done("ws refused " + path);
  });
}
async function attack() {
  const tries = [];
  for (const [path, body] of [["/api/v1/tools/terminal/run", run], ["/api/v1/messages", forged], ["/api/v1/import", history],
                              ["/v1/chat/completions", chat], ["/api/v1/approvals/0123456789ab", '{"allow": true}']]) {
    tries.push(fetch(api + path, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body}));
    tries.push(fetch(api + path, {method: "POST", mode: "no-cors", credentials: "include", body: new Blob([body])}));
    tries.push(fetch(api + path, {method: "POST", headers: {"Content-Type": "application/json"}, body}));
    // A form whose text/plain body is JSON: name={"arguments":…,"x":" value="}
    tries.push(form(path, "text/plain", body.slice(0, -1) + ', "x": "', '"}'));
    tries.push(form(path, "application/x-www-form-urlencoded", body, ""));
    tries.push(form(path, "multipart/form-data", "arguments", body));
  }
  tries.push(ws("/api/v1/stream?channel=home"));
  tries.push(ws("/onebot/v11/ws"));
  const results = await Promise.allSettled(tries);
  document.title = "done " + results.length;
}
attack();
</script>`

// samePage is a page of the daemon's own origin (smaller than the desktop
// page at /): from its own origin, with JSON, it runs the tool.
const samePage = `<!doctype html><title>loading</title>
<script>
fetch("/api/v1/tools/terminal/run", {method: "POST", headers: {"Content-Type": "application/json"},
  body: JSON.stringify({arguments: {command: "touch " + %q}})})
  .then(r => r.json().then(j => document.title = "same " + r.status + " " + j.decision))
  .catch(e => document.title = "same failed " + e);
</script>`

func TestHostilePageInARealBrowserRunsNothing(t *testing.T) {
	b := browsertest.Start(t)
	r, canary, reg := toolsRig(t, nil)

	// The API as the browser reaches it, counting what arrives.
	var (
		mu     sync.Mutex
		status = map[string]int{}
	)
	mine := filepath.Join(filepath.Dir(canary), "made-by-the-page")
	apiSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/__test/page" && req.Header.Get("Origin") == "" {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, samePage, mine)
			return
		}
		rec := &statusWriter{ResponseWriter: w}
		r.server.ServeHTTP(rec, req)
		mu.Lock()
		status[fmt.Sprintf("%s %s %d", req.Method, req.URL.Path, rec.code)]++
		mu.Unlock()
	}))
	defer apiSrv.Close()
	// The hostile page: another origin (localhost is another site than
	// 127.0.0.1, and another port).
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, hostilePage, apiSrv.URL, canary)
	}))
	defer evil.Close()
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	before := r.st.LastArrival()

	if err := b.Run(chromedp.Navigate(evilURL), chromedp.WaitVisible(chromedp.CSS("body"))); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(b.Context(), chromedp.Poll[string](`document.title.startsWith("done") && document.title`))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	posts, refused := 0, 0
	for k, n := range status {
		if !strings.HasPrefix(k, "GET /__test") {
			posts += n
			if strings.HasSuffix(k, " 403") {
				refused += n
			}
		}
	}
	t.Logf("%s; the API got %d requests from the page, refused %d: %v", title, posts, refused, status)
	mu.Unlock()
	if posts < 27 || refused != posts {
		t.Errorf("want every one of ≥ 27 attacking requests (5 routes × 2 no-cors fetches, 1 preflight, 3 forms; 2 WebSockets) to arrive and be refused")
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatal("the hostile page ran a command: the canary exists")
	}
	if r.st.LastArrival() != before {
		t.Fatal("the hostile page stored a message")
	}
	if p, _ := reg.Approvals().Pending(); len(p) != 0 {
		t.Fatalf("the hostile page parked a call: %v", p)
	}

	// The daemon's own page, from its own origin, works.
	if err := b.Run(chromedp.Navigate(apiSrv.URL + "/__test/page")); err != nil {
		t.Fatal(err)
	}
	title, err = chromedp.Run(b.Context(), chromedp.Poll[string](`document.title.startsWith("same") && document.title`))
	if err != nil || title != "same 200 allow" {
		t.Fatalf("same-origin page: %q %v (console: %q)", title, err, b.ConsoleErrors())
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatal("the same-origin page's call did not run")
	}
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = 200
	}
	return s.ResponseWriter.Write(b)
}
