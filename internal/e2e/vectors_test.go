package e2e

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/embedtest"
)

// TestTheVectorFileOutlivesARestart: with a model embedder (Ollama's
// /api/embed, the repository's fake server) the daemon keeps its vectors'
// codes in a file in the data dir; a restart opens that file (nothing
// embedded again) and recall finds by meaning at once; a torn file is
// rebuilt from the embeddings in the database, and recall finds the same.
func TestTheVectorFileOutlivesARestart(t *testing.T) {
	t.Parallel()
	_, url := fakeLLM(t)
	emb := &embedtest.Server{Dims: 96, Synonyms: map[string]string{"test": "exam"}}
	srv := httptest.NewServer(emb)
	defer srv.Close()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "cyan.yaml")
	yaml := fmt.Sprintf("embed:\n  provider: ollama\n  base_url: %s\n  model: nomic-embed-text\n", srv.URL)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	envv := env(data, url, "CYAN_CONFIG="+cfg)
	d := start(t, data, envv)
	path, n := historyFile(t)
	if _, stderr, rc := cli(t, d.cliEnv(), "", "import", path); rc != 0 {
		t.Fatalf("cyan import: rc=%d %s", rc, stderr)
	}
	// The embedding cursor moves just before the vectors join the index.
	st := waitVectors(t, d)
	if st["vectors_off"] == true || st["vectors"].(float64) < float64(n)/2 {
		t.Fatalf("vectors after the import: %v", st)
	}
	vectors := st["vectors"].(float64)
	// "test" shares no word with the history's exams; the fake server's
	// synonym makes it mean "exam".
	found := func(d *daemon) {
		t.Helper()
		code, out, err := d.post("/api/v1/recall", map[string]any{"prompt": "test", "mode": "search", "max_results": 3})
		if err != nil || code != 200 || out["vector"] != true || !strings.Contains(fmt.Sprint(out["results"]), "physics exam") {
			t.Fatalf("recall by meaning: %d %v %v", code, out, err)
		}
	}
	found(d)
	d.stop(syscall.SIGTERM)
	files, _ := filepath.Glob(filepath.Join(data, "recall", "vectors-*.vec"))
	if len(files) != 1 {
		t.Fatalf("vector files after a clean stop: %v", files)
	}
	texts := emb.Texts()

	d = start(t, data, envv)
	st = waitVectors(t, d)
	if st["vectors"].(float64) != vectors || emb.Texts() > texts+5 { // queries embed a text each
		t.Fatalf("after restart: %v, %d texts embedded (%d before)", st, emb.Texts(), texts)
	}
	found(d)
	if !strings.Contains(d.stderr.String(), "vector index opened from its file") {
		t.Fatalf("the restart did not open the vector file:\n%s", d.stderr.String())
	}
	d.stop(syscall.SIGTERM)

	// Torn: half of it is gone.
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files[0], b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	texts = emb.Texts()
	d = start(t, data, envv)
	st = waitVectors(t, d)
	if st["vectors"].(float64) != vectors || emb.Texts() > texts+5 {
		t.Fatalf("after a torn file: %v, %d texts embedded (%d before)", st, emb.Texts(), texts)
	}
	found(d)
	if !strings.Contains(d.stderr.String(), "rebuilding it from the stored embeddings") {
		t.Fatalf("the torn file was not rebuilt:\n%s", d.stderr.String())
	}
	d.stop(syscall.SIGTERM)
}

// waitVectors waits until recall has read every message and every
// document has its vector.
func waitVectors(t *testing.T, d *daemon) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := waitIndexed(t, d)
		if st["vectors"] == st["documents"] {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the vectors did not catch up: %v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
