package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// apiRoutes reads the routes the API registers from its source, so a route
// added later is driven too: "METHOD /path/{wildcard}".
func apiRoutes(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../api/*.go")
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	text := src.String()
	consts := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:const\s+)?(\w+)\s*=\s*"(/[^"]*)"`).FindAllStringSubmatch(text, -1) {
		consts[m[1]] = m[2]
	}
	var routes []string
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`\.Handle(?:Func)?\("([A-Z]+) (?:(/[^"]*)"|"\+(\w+))`).FindAllStringSubmatch(text, -1) {
		path := m[2]
		if path == "" {
			path = consts[m[3]]
		}
		if path == "" {
			t.Fatalf("cannot resolve the route %q", m[0])
		}
		r := m[1] + " " + path
		if !seen[r] {
			seen[r] = true
			routes = append(routes, r)
		}
	}
	if len(routes) < 25 {
		t.Fatalf("found only %d routes in the API's source: %v", len(routes), routes)
	}
	return routes
}

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestEveryRouteSurvivesBadInput drives every route of the API with empty,
// malformed, wrong-typed and oversized bodies, queries and path values,
// and runs every observer by hand: no answer is a 5xx, no handler panics,
// every refusal is a JSON error with a message, and the daemon still
// answers afterwards.
func TestEveryRouteSurvivesBadInput(t *testing.T) {
	_, cfg := fakeLLMConfig(t)
	cfg.Limits.MessagesPerMinute = 0
	// A body limit of 64 KiB, not the default 1 MiB: the body over it (huge,
	// twice the limit) meets the same MaxBytesReader refusal on every route,
	// and the ~300 bodies over it cost a sixteenth of the default's under
	// -race (2 MiB bodies made this test a minute long).
	cfg.API.MaxBodyBytes = 64 << 10
	logs := new(logBuffer)
	addrc := make(chan net.Addr, 1)
	d, err := New(Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(logs, nil)), Ready: func(a net.Addr) { addrc <- a }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	base := "http://" + (<-addrc).String()
	client := &http.Client{Timeout: 30 * time.Second}

	huge := `{"text":"` + strings.Repeat("x", 2*cfg.API.MaxBodyBytes) + `"}`
	wrong := `{"channel":5,"text":[],"user":{},"user_id":1,"kind":7,"limit":"x","now":7,"from":[],"to":{},"messages":"none",` +
		`"arguments":"x","allow":"yes","prompt":9,"max_results":-5,"since":"yesterday","until":3,"mode":"nope","token":1,` +
		`"model":[],"stream":"yes","message_id":{},"final":"no","as":5,"input":3,"voice":[]}`
	bodies := []string{"", "{", "[]", "null", "123", `"a string"`, "{}", wrong, huge,
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
		`{"channel":"` + strings.Repeat("c", 300) + `","text":"hi"}`,
		`{"channel":"c\u0000","text":"\u0000"}`,
		`{"now":"9999-12-31T00:00:00Z","from":"0001-01-01T00:00:00Z","to":"9999-12-31T00:00:00Z","channel":"c"}`,
		`{"prompt":"x","max_results":100000000,"since":"9999-12-31","until":"0001-01-01","window":1000000000}`,
		`{"messages":[{"time":"nope","channel":"","text":""}]}`,
	}
	queries := []string{"", "?channel=&limit=-1&level=zzz&last=99999999999&curve=1000000000&all=maybe",
		"?channel=" + strings.Repeat("c", 300) + "&limit=1000000&name=" + strings.Repeat("n", 5000),
		"?channel=%00&limit=0&last=0&curve=0&level=year&since=notatime"}
	values := []string{"nope", "..%2F..%2Fetc%2Fpasswd", strings.Repeat("v", 300), "%00", "main-observer"}

	check := func(what string, resp *http.Response, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Errorf("%s: %d %.300s", what, resp.StatusCode, raw)
			return
		}
		if resp.StatusCode >= 400 && resp.StatusCode != http.StatusMethodNotAllowed {
			var e struct {
				Error struct{ Message, Type string } `json:"error"`
			}
			if json.Unmarshal(raw, &e) != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Errorf("%s: %d without a JSON error that says why: %.300s", what, resp.StatusCode, raw)
			}
		}
	}
	requests := 0
	for _, route := range apiRoutes(t) {
		method, pattern, _ := strings.Cut(route, " ")
		if pattern == "/api/v1/stream" || strings.HasPrefix(pattern, "/onebot/") {
			continue // long-lived streams: their own tests
		}
		// Every body with every path value, and every query with the
		// first path value and the worst bodies.
		type input struct{ v, q, body string }
		var inputs []input
		for _, v := range values {
			for _, b := range bodies {
				inputs = append(inputs, input{v, queries[0], b})
			}
		}
		for _, q := range queries[1:] {
			for _, b := range []string{"", wrong, huge} {
				inputs = append(inputs, input{values[0], q, b})
			}
		}
		for _, in := range inputs {
			if method == "GET" && in.body != "" {
				continue
			}
			path := regexp.MustCompile(`\{[^}]*\}`).ReplaceAllStringFunc(pattern, func(w string) string {
				if w == "{$}" {
					return ""
				}
				return in.v
			})
			req, _ := http.NewRequest(method, base+path+in.q, strings.NewReader(in.body))
			if method != "GET" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := client.Do(req)
			requests++
			check(fmt.Sprintf("%s %s%.60s body %.40q", method, path, in.q, in.body), resp, err)
		}
	}
	// Every observer, run by hand.
	resp, err := client.Get(base + "/api/v1/observers")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Observers []struct{ Name string } `json:"observers"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Observers) < 2 {
		t.Fatalf("observers: %+v", list)
	}
	for _, o := range list.Observers {
		resp, err := client.Post(base+"/api/v1/observers/"+o.Name+"/run", "application/json", strings.NewReader("{}"))
		requests++
		check("run observer "+o.Name, resp, err)
	}
	resp, err = client.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the daemon after %d bad requests: %v %v", requests, resp, err)
	}
	resp.Body.Close()
	if strings.Contains(logs.String(), "panic") {
		t.Fatalf("a handler panicked:\n%s", logs.String())
	}
	t.Logf("%d requests on %d routes, %d observers run by hand", requests, len(apiRoutes(t)), len(list.Observers))
}
