package daemon

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/mainvirtual"
)

// TestCompressorRunsThePersonasScript builds the daemon's parts with a
// persona whose compress override takes only the text and answers in plain
// text, and a broken one that the daemon refuses to start with.
func TestCompressorRunsThePersonasScript(t *testing.T) {
	fake := new(llmtest.Server)
	llmSrv := httptest.NewServer(fake)
	defer llmSrv.Close()
	dir := t.TempDir()
	pdir := filepath.Join(dir, "p")
	if err := os.MkdirAll(filepath.Join(pdir, "scripts"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pdir, "persona.md"), []byte("---\nname: Cy\n---\nhi\n"), 0o600)
	override := filepath.Join(pdir, "scripts", "compress.ai.yaml")
	os.WriteFile(override, []byte("---\ninput: [text]\n---\nuser: \"Shorten: {{ text }}\"\n"), 0o600)
	cfgFile := filepath.Join(dir, "cyan.yaml")
	os.WriteFile(cfgFile, []byte("persona: ./p\n"), 0o600)
	env := map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "CYAN_CONFIG": cfgFile, "CYAN_ADDR": "127.0.0.1:0",
		"CYAN_LLM_BASE_URL": llmSrv.URL + "/v1", "CYAN_LLM_MODEL": "fake-model"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	var c mainvirtual.Compressor = d.scripts
	fake.Enqueue(llmtest.Reply{Text: "  said hello  "})
	text, traceID, err := c.Compress(context.Background(), "home", "hello there", d.persona.Load().Name)
	if err != nil || strings.TrimSpace(text) != "said hello" || traceID == "" {
		t.Fatalf("Compress = %q, %q, %v", text, traceID, err)
	}
	tr, err := d.gen.Traces().Get(traceID)
	if err != nil || tr.Channel != "home" || tr.Name != "compress" || tr.Instruction != "Shorten: hello there" {
		t.Fatalf("trace %+v %v", tr, err)
	}
	d.store.Close()

	os.WriteFile(override, []byte("user: \"{{ broken\"\n"), 0o600)
	if _, err := New(Options{Config: cfg}); err == nil || !strings.Contains(err.Error(), "agent.compress.enabled: false") {
		t.Fatalf("a broken compress script: %v", err)
	}
}
