package scripttest

import (
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/script"
	"github.com/cyan-agent/cyan/store"
)

// update rewrites the golden files (go test -run X -update). A package
// whose tests use this rig takes the flag from here and must not define
// its own.
var update = flag.Bool("update", false, "rewrite the golden files of rendered scripts")

// Rig is a script library whose generator talks to a fake LLM.
type Rig struct {
	Lib    *script.Library
	Gen    *generate.Generator
	Fake   *llmtest.Server
	Traces *generate.Traces
	// URL is the fake's OpenAI-compatible base URL (…/v1).
	URL string
}

// Options tune New.
type Options struct {
	// PersonaDir is the persona folder whose scripts/ override the
	// built-in ones ("": none).
	PersonaDir string
	// Now is the clock of the traces (nil: a fixed time).
	Now func() time.Time
	// Wrap, if set, wraps the LLM client the generator talks through (a
	// metered client, as the daemon's).
	Wrap func(llm.Client) llm.Client
}

// New makes a rig; everything it starts ends with the test.
func New(t testing.TB, o Options) *Rig {
	t.Helper()
	fake := new(llmtest.Server)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	client, err := llm.New(llm.Options{BaseURL: srv.URL + "/v1", Model: "fake-model", MaxRetries: -1, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if o.Wrap != nil {
		client = o.Wrap(client)
	}
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	traces, err := generate.OpenTraces(st, 100)
	if err != nil {
		t.Fatal(err)
	}
	now := o.Now
	if now == nil {
		now = func() time.Time { return time.Date(2026, 2, 16, 12, 0, 0, 0, time.UTC) }
	}
	gen, err := generate.New(generate.Options{LLM: client, Traces: traces, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	dir := o.PersonaDir
	lib, err := script.NewLibrary(script.LibraryOptions{Generator: gen, PersonaDir: func() string { return dir }})
	if err != nil {
		t.Fatal(err)
	}
	return &Rig{Lib: lib, Gen: gen, Fake: fake, Traces: traces, URL: srv.URL + "/v1"}
}

// Chats returns the chat requests the fake received, in order (the model
// list is left out).
func (r *Rig) Chats() []llmtest.Request {
	var out []llmtest.Request
	for _, q := range r.Fake.Requests() {
		if q.Method == http.MethodPost {
			out = append(out, q)
		}
	}
	return out
}

// Named returns the chat requests whose response format is named name
// (a script's calls ask for a format named after it).
func (r *Rig) Named(name string) []llmtest.Request {
	var out []llmtest.Request
	for _, q := range r.Chats() {
		if FormatName(q) == name {
			out = append(out, q)
		}
	}
	return out
}

// FormatName is the name of a request's JSON-schema response format, ""
// when it asks for none.
func FormatName(q llmtest.Request) string {
	rf := string(q.ResponseFormat)
	_, rest, ok := strings.Cut(rf, `"name":"`)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, `"`)
	return name
}

// Render is a request as a golden file holds it: each message under its
// role, then the response format.
func Render(q llmtest.Request) string {
	var b strings.Builder
	for _, m := range q.Messages {
		fmt.Fprintf(&b, "=== %s ===\n%s\n", m.Role, m.Content)
	}
	fmt.Fprintf(&b, "=== response_format ===\n%s\n", q.ResponseFormat)
	return b.String()
}

// Golden compares got with the file testdata/<name>; -update rewrites it.
func Golden(t testing.TB, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", filepath.FromSlash(name))
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got ---\n%s\n--- want ---\n%s", p, got, want)
	}
}
