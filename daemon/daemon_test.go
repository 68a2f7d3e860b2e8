package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/tools"
	"go.uber.org/goleak"
)

func TestLoadToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", TokenFile)
	tok, err := loadToken(path)
	if err != nil || len(tok) != 64 {
		t.Fatalf("new token %q, %v", tok, err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", st.Mode().Perm())
	}
	again, _ := loadToken(path)
	if again != tok || ReadToken(filepath.Dir(path)) != tok {
		t.Errorf("token not stable")
	}
	os.WriteFile(path, []byte("short"), 0o600)
	if _, err := loadToken(path); err == nil || !strings.Contains(err.Error(), "delete the file") {
		t.Errorf("short token: %v", err)
	}
}

// TestDaemonServesAndStops runs the whole daemon in-process: it answers,
// stops cleanly on cancel, and releases its data dir.
func TestDaemonServesAndStops(t *testing.T) {
	_, cfg := fakeLLMConfig(t)
	addrc := make(chan net.Addr, 1)
	d, err := New(Options{Config: cfg, Ready: func(a net.Addr) { addrc <- a }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Config: cfg}); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("a second daemon on the data dir: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	addr := <-addrc
	resp, err := http.Post("http://"+addr.String()+"/api/v1/messages", "application/json", strings.NewReader(`{"channel":"c","text":"hi"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v after cancel", err)
		}
	case <-time.After(ShutdownTimeout + time.Second):
		t.Fatal("Run did not return within the shutdown timeout")
	}
	if _, held, _ := store.Holder(cfg.DataDir); held {
		t.Fatal("the data dir is still locked after Run")
	}
}

func TestListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = net.Listen("tcp", ln.Addr().String())
	if msg := listenError(ln.Addr().String(), err).Error(); !strings.Contains(msg, "CYAN_ADDR") || !strings.Contains(msg, "in use") {
		t.Fatalf("listen error = %q", msg)
	}
}

// TestNoLeakedGoroutines starts the whole daemon with every observer kind
// running — main-observer, plan scheduling, self-decided speech and a
// persona observer — serves a turn, stops, and checks nothing is left.
func TestNoLeakedGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fake := new(llmtest.Server)
	llmSrv := httptest.NewServer(fake)
	defer llmSrv.Close()
	dir := t.TempDir()
	pdir := filepath.Join(dir, "persona")
	os.MkdirAll(filepath.Join(pdir, "observers"), 0o755)
	os.WriteFile(filepath.Join(pdir, "persona.md"), []byte("---\nname: Tester\n---\nYou are ${agent_name}.\n"), 0o644)
	os.WriteFile(filepath.Join(pdir, "observers", "nudge.yaml"), []byte("name: nudge\ntriggers: [{cron: '@hourly'}, {on: AfterUserMessage}]\nprompt: say hi if useful\nchannels: [c]\n"), 0o644)
	cfgFile := filepath.Join(dir, "cyan.yaml")
	os.WriteFile(cfgFile, []byte("persona: persona\nobservers:\n  speech:\n    every: 1h\n    channels: [c]\n"), 0o644)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "CYAN_CONFIG": cfgFile, "CYAN_ADDR": "127.0.0.1:0",
			"CYAN_LLM_BASE_URL": llmSrv.URL + "/v1", "CYAN_LLM_MODEL": "fake-model"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	addrc := make(chan net.Addr, 1)
	d, err := New(Options{Config: cfg, Ready: func(a net.Addr) { addrc <- a }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	addr := <-addrc
	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Post("http://"+addr.String()+"/api/v1/messages", "application/json", strings.NewReader(`{"channel":"c","text":"hi"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = client.Get("http://" + addr.String() + "/api/v1/observers")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Observers []struct{ Name string } `json:"observers"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	names := fmt.Sprint(list.Observers)
	for _, want := range []string{"main-observer", "main-observer/plans", "main-observer/speech", "nudge"} {
		if !strings.Contains(names, "{"+want+"}") {
			t.Errorf("observer %s is not running: %s", want, names)
		}
	}
	client.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// fakeLLMConfig starts the fake LLM and loads the configuration of a
// daemon on a fresh data dir that uses it, on a free loopback port.
func fakeLLMConfig(t *testing.T) (*llmtest.Server, *config.Config) {
	t.Helper()
	fake := new(llmtest.Server)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"CYAN_DATA_DIR": dir, "CYAN_ADDR": "127.0.0.1:0", "CYAN_LLM_BASE_URL": srv.URL + "/v1", "CYAN_LLM_MODEL": "fake-model"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	return fake, cfg
}

// TestEveryPartsToolIsRegisteredBeforeTheManifests: the registry takes
// every part's tools (files, workspace, event log, recall, open,
// components) before the extra folders are read, so a manifest that takes
// one of their names is a problem of that manifest, not a daemon that
// does not start.
func TestEveryPartsToolIsRegisteredBeforeTheManifests(t *testing.T) {
	_, cfg := fakeLLMConfig(t)
	prov := filepath.Join(cfg.DataDir, "tools", "extra", "provided")
	if err := os.MkdirAll(prov, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(prov, "remember.yaml"), []byte("title: shadow\nrun: {argv: [x]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Config: cfg})
	if err != nil {
		t.Fatalf("a manifest named like a part's tool stopped the start: %v", err)
	}
	defer d.store.Close()
	for _, name := range []string{"remember", "context_operation", "plan", "workspace_usage", "event", "theory", "recall", "open", "custom_tool", "speak"} {
		if s, ok := d.tools.reg.Get(name); !ok || s.Source != tools.SourceBuiltin {
			t.Errorf("%s: %+v %v", name, s, ok)
		}
	}
	found := false
	for _, p := range d.tools.extras.Problems() {
		found = found || strings.Contains(p.Error(), "remember: the name is taken")
	}
	if !found {
		t.Errorf("problems: %v", d.tools.extras.Problems())
	}
}
