package api

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/metrics"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/tools"
)

// stateRoutes finds every state-changing route the package registers, by
// reading its source, so a route added later is attacked too.
func stateRoutes(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("*.go")
	re := regexp.MustCompile(`"((?:POST|PUT|PATCH|DELETE) (?:/[^"]*)?)"(?:\s*\+\s*(SessionPath))?`)
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			r := m[1]
			if m[2] != "" {
				r += SessionPath
			}
			out = append(out, r)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) < 12 {
		t.Fatalf("found only %d state-changing routes: %q", len(out), out)
	}
	return out
}

// concrete fills a route pattern's wildcards: the terminal tool, so a
// forged run would create the canary.
func concrete(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.NewReplacer("{name}", "terminal", "{id}", "0123456789ab").Replace(path)
	return method, path
}

// toolsRig is an API whose owner may run the terminal without confirming,
// so that a request that got past the guard would create the canary.
func toolsRig(t *testing.T, mutate func(*Options)) (*rig, string, *tools.Registry) {
	t.Helper()
	root := t.TempDir()
	paths, err := tools.NewPaths([]string{root}, t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(paths.Close)
	var perm packets.Permission
	if err := json.Unmarshal([]byte(`{"tools": ["*"], "defaultAction": "deny"}`), &perm); err != nil {
		t.Fatal(err)
	}
	reg := tools.New(tools.Options{Owner: &perm})
	for _, tl := range (tools.Builtins{Paths: paths, Sandbox: &tools.Sandbox{}}).Tools() {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	r := newRig(t, func(o *Options) {
		o.Tools = reg
		if mutate != nil {
			mutate(o)
		}
	})
	reg.EnableApprovals(tools.ApprovalOptions{Store: r.st})
	return r, filepath.Join(root, "canary"), reg
}

type attack struct {
	name    string
	ctype   string
	body    func(canary string) io.Reader
	headers []string
}

// attacks are what a hostile page's fetch, form or WebSocket sends.
func attacks() []attack {
	jsonBody := func(canary string) string {
		b, _ := json.Marshal(map[string]any{"arguments": map[string]string{"command": "touch " + canary},
			"channel": "home", "user": "owner", "text": "forged", "allow": true, "token": "x",
			"messages": []map[string]string{{"time": "2024-01-01T00:00:00Z", "channel": "home", "text": "forged"}},
			"prompt":   "x"})
		return string(b)
	}
	evil := []string{"Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"}
	return []attack{
		{"fetch no-cors text/plain", "text/plain;charset=UTF-8", func(c string) io.Reader { return strings.NewReader(jsonBody(c)) }, evil},
		{"form text/plain", "text/plain", func(c string) io.Reader {
			j := jsonBody(c)
			return strings.NewReader(j[:len(j)-1] + `, "x": "=` + `"}`)
		}, evil},
		{"form urlencoded", "application/x-www-form-urlencoded", func(c string) io.Reader {
			return strings.NewReader(url.Values{jsonBody(c): {""}}.Encode())
		}, evil},
		{"form multipart", "", nil, evil},
		{"sandboxed iframe (Origin null)", "text/plain", func(c string) io.Reader { return strings.NewReader(jsonBody(c)) },
			[]string{"Origin", "null", "Sec-Fetch-Site", "cross-site"}},
		{"json from another origin", "application/json", func(c string) io.Reader { return strings.NewReader(jsonBody(c)) }, evil},
		{"another port of localhost", "application/json", func(c string) io.Reader { return strings.NewReader(jsonBody(c)) },
			[]string{"Origin", "http://127.0.0.1:1", "Sec-Fetch-Site", "same-site"}},
		{"no Origin, cross-site", "text/plain", func(c string) io.Reader { return strings.NewReader(jsonBody(c)) },
			[]string{"Sec-Fetch-Site", "cross-site"}},
		{"two Origin headers", "application/json", func(c string) io.Reader { return strings.NewReader(jsonBody(c)) },
			[]string{"Origin", "", "Origin", "http://evil.example"}},
	}
}

func send(t *testing.T, base, method, path, ctype string, body io.Reader, hdr []string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, body)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	if req.Header.Get("Origin") == "" && len(req.Header.Values("Origin")) > 0 {
		// "two Origin headers": the first is filled with our own origin.
		req.Header["Origin"][0] = base
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestCrossSiteRequestsToEveryStateChangingRouteAreRefused(t *testing.T) {
	r, canary, reg := toolsRig(t, nil)
	routes := stateRoutes(t)
	before := r.st.LastArrival()
	n := 0
	for _, route := range routes {
		method, path := concrete(route)
		for _, a := range attacks() {
			body, ctype := io.Reader(nil), a.ctype
			if a.body != nil {
				body = a.body(canary)
			} else {
				var b bytes.Buffer
				mw := multipart.NewWriter(&b)
				_ = mw.WriteField("arguments", `{"command": "touch `+canary+`"}`)
				mw.Close()
				body, ctype = &b, mw.FormDataContentType()
			}
			code, out := send(t, r.srv.URL, method, path, ctype, body, a.headers)
			n++
			if code != http.StatusForbidden || !strings.Contains(out, "forbidden_origin") {
				t.Errorf("%s %s, %s: %d %s; want 403 forbidden_origin", method, path, a.name, code, out)
			}
		}
	}
	t.Logf("%d routes × %d attacks = %d refused requests", len(routes), len(attacks()), n)
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatalf("the canary exists: %v", err)
	}
	if r.st.LastArrival() != before {
		t.Fatal("a forged request stored a message")
	}
	if p, _ := reg.Approvals().Pending(); len(p) != 0 {
		t.Fatalf("a forged request parked a call: %v", p)
	}
	// The same run without a browser's headers works: the canary is real.
	code, out := send(t, r.srv.URL, "POST", "/api/v1/tools/terminal/run", "application/json",
		strings.NewReader(`{"arguments": {"command": "touch `+canary+`"}}`), nil)
	if code != 200 {
		t.Fatalf("control run: %d %s", code, out)
	}
	if _, err := os.Stat(canary); err != nil {
		t.Fatalf("the control run did not create the canary: %v", err)
	}
}

func TestSameOriginPageWorks(t *testing.T) {
	// The desktop page (not built yet) calls from the daemon's own origin;
	// a browser sends Origin and Sec-Fetch-Site: same-origin.
	r, canary, _ := toolsRig(t, nil)
	r.fake.Enqueue()
	own := []string{"Origin", r.srv.URL, "Sec-Fetch-Site", "same-origin"}
	code, out := send(t, r.srv.URL, "POST", "/api/v1/tools/terminal/run", "application/json",
		strings.NewReader(`{"arguments": {"command": "touch `+canary+`"}}`), own)
	if code != 200 {
		t.Fatalf("same-origin run: %d %s", code, out)
	}
	if _, err := os.Stat(canary); err != nil {
		t.Fatal("the same-origin run did not run")
	}
	if code, out := send(t, r.srv.URL, "GET", "/api/v1/tools", "", nil, own); code != 200 {
		t.Fatalf("same-origin GET: %d %s", code, out)
	}
	// A text/plain body is refused even from the page: 415, clearly.
	code, out = send(t, r.srv.URL, "POST", "/api/v1/messages", "text/plain", strings.NewReader(`{"channel":"c","text":"x"}`), own)
	if code != 415 || !strings.Contains(out, "application/json") {
		t.Fatalf("text/plain from the page: %d %s", code, out)
	}
	// And from curl, which sends no Origin.
	code, out = send(t, r.srv.URL, "DELETE", "/api/v1/memory/x", "", nil, nil)
	if code != 415 {
		t.Fatalf("DELETE without a content type: %d %s", code, out)
	}
	// A typed URL or bookmark (Sec-Fetch-Site: none) reads.
	if code, out := send(t, r.srv.URL, "GET", "/healthz", "", nil, []string{"Sec-Fetch-Site", "none"}); code != 200 {
		t.Fatalf("typed URL: %d %s", code, out)
	}
}

func TestCrossSiteReadsAndUpgradesAreRefused(t *testing.T) {
	r, _, _ := toolsRig(t, nil)
	for _, tc := range []struct {
		name string
		path string
		hdr  []string
		want int
	}{
		{"img or script tag", "/api/v1/messages?channel=home", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors"}, 403},
		{"WebSocket upgrade from a page", "/api/v1/stream", []string{"Origin", "http://evil.example", "Connection", "Upgrade", "Upgrade", "websocket",
			"Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}, 403},
		{"OneBot path from a page", "/onebot/v11/ws", []string{"Origin", "http://evil.example", "Upgrade", "websocket"}, 403},
		{"cors fetch of a GET", "/api/v1/approvals", []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "cors"}, 403},
		{"link to an API route", "/api/v1/tools", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate"}, 403},
		{"link to a public page", "/healthz", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate"}, 200},
		{"same-site, not same-origin", "/api/v1/tools", []string{"Sec-Fetch-Site", "same-site"}, 403},
		{"origin with a path", "/api/v1/tools", []string{"Origin", r.srv.URL + "/x"}, 403},
	} {
		code, out := send(t, r.srv.URL, "GET", tc.path, "", nil, tc.hdr)
		if code != tc.want {
			t.Errorf("%s: %d %s; want %d", tc.name, code, out, tc.want)
		}
	}
}

func TestAllowedOriginsGetCORS(t *testing.T) {
	r, _, _ := toolsRig(t, func(o *Options) { o.AllowedOrigins = []string{"https://front.example:8443"} })
	req, _ := http.NewRequest("OPTIONS", r.srv.URL+"/api/v1/messages", nil)
	req.Header.Set("Origin", "https://FRONT.example:8443")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://FRONT.example:8443" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	code, out := send(t, r.srv.URL, "GET", "/api/v1/tools", "", nil, []string{"Origin", "https://front.example:8443", "Sec-Fetch-Site", "cross-site"})
	if code != 200 {
		t.Fatalf("allowed origin: %d %s", code, out)
	}
	// Its text/plain posts are refused all the same.
	code, _ = send(t, r.srv.URL, "POST", "/api/v1/messages", "text/plain", strings.NewReader("{}"), []string{"Origin", "https://front.example:8443"})
	if code != 415 {
		t.Fatalf("allowed origin, text/plain: %d", code)
	}
	// The preflight of another origin is refused.
	if code, _ := send(t, r.srv.URL, "OPTIONS", "/api/v1/messages", "", nil, []string{"Origin", "https://front.example"}); code != 403 {
		t.Fatalf("other origin's preflight: %d", code)
	}
}

func TestTokenSessionAndDoors(t *testing.T) {
	const token = "0123456789abcdef0123"
	hit := 0
	r, _, _ := toolsRig(t, func(o *Options) {
		o.Token, o.CheckHost = token, false
		o.Doors = []Door{{Path: "/onebot/v11/ws", Access: OwnAuth}, {Path: "/page/", Access: Public}}
	})
	// A route with its own credentials, mounted beside the API.
	r.server.mux.HandleFunc("GET /onebot/v11/ws", func(w http.ResponseWriter, r *http.Request) {
		hit++
		if r.URL.Query().Get("access_token") != "onebot-secret" {
			writeError(w, 401, "unauthorized", "bad access_token")
			return
		}
		writeJSON(w, 200, map[string]bool{"ok": true})
	})
	r.server.mux.HandleFunc("GET /page/", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]bool{"page": true}) })
	for _, tc := range []struct {
		name   string
		method string
		path   string
		hdr    []string
		want   int
	}{
		{"no token", "GET", "/api/v1/tools", nil, 401},
		{"Bearer", "GET", "/api/v1/tools", []string{"Authorization", "Bearer " + token}, 200},
		{"lower-case bearer", "GET", "/api/v1/tools", []string{"Authorization", "bearer " + token}, 200},
		{"upper-case BEARER, extra spaces", "GET", "/api/v1/tools", []string{"Authorization", "BEARER   " + token}, 200},
		{"Basic", "GET", "/api/v1/tools", []string{"Authorization", "Basic " + token}, 401},
		{"wrong cookie", "GET", "/api/v1/tools", []string{"Cookie", SessionCookie + "=" + token}, 401},
		{"healthz is public", "GET", "/healthz", nil, 200},
		{"a public door", "GET", "/page/app.js", nil, 200},
		{"own auth: no API token, right access_token", "GET", "/onebot/v11/ws?access_token=onebot-secret", nil, 200},
		{"own auth: its own check still runs", "GET", "/onebot/v11/ws?access_token=nope", nil, 401},
		{"own auth keeps the Origin check", "GET", "/onebot/v11/ws?access_token=onebot-secret", []string{"Origin", "http://evil.example"}, 403},
		{"a public door keeps the Origin check", "GET", "/page/app.js", []string{"Origin", "http://evil.example"}, 403},
		{"a door does not open its neighbours", "GET", "/onebot/v11/wsx", nil, 401},
		{"session state needs no token", "GET", SessionPath, nil, 200},
	} {
		code, out := send(t, r.srv.URL, tc.method, tc.path, "", nil, tc.hdr)
		if code != tc.want {
			t.Errorf("%s: %d %s; want %d", tc.name, code, out, tc.want)
		}
	}
	if hit != 2 {
		t.Errorf("the OneBot route ran %d times; want 2 (the Origin check stops the third)", hit)
	}

	// The page signs in: a wrong token is refused, the right one sets the cookie.
	own := []string{"Origin", r.srv.URL}
	if code, _ := send(t, r.srv.URL, "POST", SessionPath, "application/json", strings.NewReader(`{"token": "nope"}`), own); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	if code, _ := send(t, r.srv.URL, "POST", SessionPath, "application/json", strings.NewReader(`{"token": "`+token+`"}`),
		[]string{"Origin", "http://evil.example"}); code != 403 {
		t.Fatalf("sign-in from another origin: %d", code)
	}
	req, _ := http.NewRequest("POST", r.srv.URL+SessionPath, strings.NewReader(`{"token": "`+token+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", r.srv.URL)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == SessionCookie {
			cookie = c
		}
	}
	if resp.StatusCode != 200 || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" ||
		cookie.Value == token || cookie.Value == "" {
		t.Fatalf("sign-in: %d %+v", resp.StatusCode, cookie)
	}
	withCookie := []string{"Cookie", SessionCookie + "=" + cookie.Value, "Origin", r.srv.URL}
	if code, out := send(t, r.srv.URL, "GET", "/api/v1/tools", "", nil, withCookie); code != 200 {
		t.Fatalf("with the cookie: %d %s", code, out)
	}
	if code, out := send(t, r.srv.URL, "GET", SessionPath, "", nil, withCookie); code != 200 || !strings.Contains(out, `"authenticated":true`) {
		t.Fatalf("session state: %d %s", code, out)
	}
	// A page of another origin that somehow has the cookie is refused anyway.
	if code, _ := send(t, r.srv.URL, "GET", "/api/v1/tools", "", nil, []string{"Cookie", SessionCookie + "=" + cookie.Value, "Origin", "http://evil.example"}); code != 403 {
		t.Fatalf("cookie from another origin: %d", code)
	}
	// The cookie is derived from the token: another daemon's token gives another.
	if sessionValue("another-token-0123456789") == cookie.Value {
		t.Fatal("the session does not depend on the token")
	}
}

func TestToolRunFromTheAPIGoesThroughApproval(t *testing.T) {
	// The default owner: what executes is confirmed first.
	root := t.TempDir()
	paths, err := tools.NewPaths([]string{root}, t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer paths.Close()
	owners, _ := tools.ParseOwners([]string{"id:1001"})
	reg := tools.New(tools.Options{Owners: owners})
	for _, tl := range (tools.Builtins{Paths: paths, Sandbox: &tools.Sandbox{}}).Tools() {
		reg.Register(tl)
	}
	r := newRig(t, func(o *Options) { o.Tools = reg })
	reg.EnableApprovals(tools.ApprovalOptions{Store: r.st})
	canary := filepath.Join(root, "canary")
	run := `{"command": "touch ` + canary + `"}`
	for _, tc := range []struct {
		name string
		body string
		want int
	}{
		{"the owner", `{"arguments": ` + run + `}`, 202},
		{"claiming the owner's id", `{"arguments": ` + run + `, "as": "id:1001"}`, 202},
		{"claiming to be confirmed", `{"arguments": ` + run + `, "confirmed": true}`, 400},
		{"claiming owner: true", `{"arguments": ` + run + `, "owner": true}`, 400},
		{"a stranger", `{"arguments": ` + run + `, "as": "id:999", "kind": "group"}`, 200},
	} {
		code, out := r.do(t, "POST", "/api/v1/tools/terminal/run", tc.body)
		if code != tc.want {
			t.Errorf("%s: %d %v; want %d", tc.name, code, out, tc.want)
		}
		if code == 202 && (out["decision"] != "confirm" || out["approval"] == "" || !strings.Contains(out["message"].(string), "cyan approvals allow")) {
			t.Errorf("%s: the answer does not say it waits: %v", tc.name, out)
		}
		if code == 200 && out["decision"] != "deny" {
			t.Errorf("%s: %v; want deny", tc.name, out)
		}
		if _, err := os.Stat(canary); !os.IsNotExist(err) {
			t.Fatalf("%s: the command ran without approval", tc.name)
		}
	}
	pending, _ := reg.Approvals().Pending()
	if len(pending) != 2 {
		t.Fatalf("pending: %d", len(pending))
	}
	code, out := r.do(t, "POST", "/api/v1/approvals/"+pending[0].ID, `{"allow": true}`)
	if code != 200 || out["allowed"] != true {
		t.Fatalf("allow: %d %v", code, out)
	}
	if _, err := os.Stat(canary); err != nil {
		t.Fatal("the approved call did not run")
	}
	// A harmless tool runs at once.
	code, out = r.do(t, "POST", "/api/v1/tools/read_file/run", `{"arguments": {"path": "`+canary+`"}}`)
	if code != 200 || out["decision"] != "allow" {
		t.Fatalf("read_file: %d %v", code, out)
	}
}

// TestMetricsNeedTheToken: /metrics is behind the same rule as the API.
func TestMetricsNeedTheToken(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	r := newRig(t, func(o *Options) { o.Token, o.CheckHost, o.Metrics = token, false, metrics.New() })
	if code, _ := r.do(t, "GET", "/metrics", ""); code != http.StatusUnauthorized {
		t.Fatalf("without the token: %d", code)
	}
	req, _ := http.NewRequest("GET", r.srv.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("with the token: %v %v", resp, err)
	}
	resp.Body.Close()
}
