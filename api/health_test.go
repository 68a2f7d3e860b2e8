package api

import (
	"context"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
)

func reasonsOf(out map[string]any) string {
	var rs []string
	list, _ := out["reasons"].([]any)
	for _, r := range list {
		rs = append(rs, r.(string))
	}
	return strings.Join(rs, "\n")
}

// TestHealthzDegraded: /healthz keeps its shape (ok, version, parts) and
// adds status and reasons: "degraded" while the store refuses writes and
// while the model could not be reached at its last call, "ok" again once
// a call succeeds.
func TestHealthzDegraded(t *testing.T) {
	// A model on a port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	down, err := llm.New(llm.Options{BaseURL: dead, Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	model := llm.Watch(down, nil)

	healthy := newRig(t, func(o *Options) { o.Model = model })
	code, out := healthy.do(t, "GET", "/healthz", "")
	if code != 200 || out["ok"] != true || out["status"] != "ok" || out["degraded"] != nil || out["reasons"] != nil {
		t.Fatalf("healthy: %d %v", code, out)
	}

	if _, err := model.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); llm.KindOf(err) != llm.Unreachable {
		t.Fatalf("a call to a closed port: %v", err)
	}
	code, out = healthy.do(t, "GET", "/healthz", "")
	if code != 200 || out["ok"] != true || out["status"] != "degraded" || out["degraded"] != true ||
		!strings.Contains(reasonsOf(out), "model_unreachable: the model could not be reached") {
		t.Fatalf("model unreachable: %d %v", code, out)
	}

	// The model answers again: ok.
	_, up := llmtest.Start(t)
	model.Client = up
	if _, err := model.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if _, out = healthy.do(t, "GET", "/healthz", ""); out["status"] != "ok" {
		t.Fatalf("after a call that succeeded: %v", out)
	}

	// A store that keeps more free space than any disk has refuses writes.
	st, err := store.Open(store.Options{Dir: filepath.Join(t.TempDir(), "data"), MinFree: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := New(Options{Agent: healthy.server.o.Agent, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	full := &rig{server: s, srv: srv}
	code, out = full.do(t, "GET", "/healthz", "")
	if code != 200 || out["ok"] != true || out["status"] != "degraded" || !strings.Contains(reasonsOf(out), "disk_full: writes are refused (507)") {
		t.Fatalf("writes refused: %d %v", code, out)
	}
	if strings.Contains(reasonsOf(out), st.DB().Opts().Dir) {
		t.Fatalf("the public /healthz names the data folder: %v", out)
	}
}
