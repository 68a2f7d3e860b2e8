package recall

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/embedtest"
)

// One message whose vector comes out NaN (Ollama: 400 for the whole
// request) is left to words alone; the messages after it are embedded.
func TestAMessageTheEmbedderRefusesHoldsNothingBack(t *testing.T) {
	fake := &embedtest.Server{Poison: func(t string) bool { return strings.Contains(t, "cherry") }}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	x, st := newTestIndex(t, Options{Embedder: newModelEmbedder(t, "ollama", srv.URL, "nomic-embed-text")})
	fillHistory(t, st)
	syncIndex(t, x)
	s := x.Status()
	if s.Embedded != s.Messages || s.Vectors != len(history)-1 || s.EmbedRefused != 1 || s.EmbedError != "" {
		t.Fatalf("status %+v: want every message read, %d vectors, 1 refused, no error", s, len(history)-1)
	}
	r, err := x.Search(context.Background(), Query{Prompt: "exam schedule"})
	if err != nil || !r.Vector || len(r.Results) == 0 {
		t.Fatalf("search after a refusal: %+v %v", r, err)
	}
	if r, err := x.Search(context.Background(), Query{Prompt: "walk under the trees"}); err != nil || len(r.Results) == 0 || !strings.Contains(r.Results[0].Text, "cherry") {
		t.Errorf("the refused message is still found by its words: %+v %v", r, err)
	}
}

// A server that refuses every text is a configuration to fix: nothing is
// skipped, the cursor stays, and the status says why.
func TestAServerThatRefusesEverythingSkipsNothing(t *testing.T) {
	fake := &embedtest.Server{Poison: func(string) bool { return true }}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	x, st := newTestIndex(t, Options{Embedder: newModelEmbedder(t, "ollama", srv.URL, "nomic-embed-text")})
	fillHistory(t, st)
	_ = x.Sync(context.Background())
	s := x.Status()
	if s.Embedded != 0 || s.Vectors != 0 || s.EmbedRefused != 0 || !strings.Contains(s.EmbedError, "NaN") {
		t.Fatalf("status %+v: want nothing embedded or skipped, and the server's error", s)
	}
	// Fixed, it catches up from where it stood.
	fake.Poison = nil
	syncIndex(t, x)
	if s := x.Status(); s.Embedded != s.Messages || s.Vectors != len(history) || s.EmbedError != "" {
		t.Fatalf("after the fix: %+v", s)
	}
}

func TestEmbedIsolatingSplitsDownToTheRefusedText(t *testing.T) {
	fake := &embedtest.Server{Poison: func(t string) bool { return t == "bad" }}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	e := newModelEmbedder(t, "openai", srv.URL+"/v1", "nomic-embed-text")
	texts := []string{"a", "b", "bad", "c", "d", "bad", "e"}
	vs, skipped, err := embedIsolating(context.Background(), e, texts)
	if err != nil || skipped != 2 || len(vs) != len(texts) {
		t.Fatalf("%d vectors, %d skipped, %v", len(vs), skipped, err)
	}
	for i, v := range vs {
		if (v == nil) != (texts[i] == "bad") {
			t.Errorf("text %d %q: vector %v", i, texts[i], v)
		}
	}
	// A 404 (model not pulled) is not a text's fault: no splitting.
	n := len(fake.Requests())
	if _, _, err := embedIsolating(context.Background(), newModelEmbedder(t, "ollama", srv.URL, "bge-m3"), texts); err == nil {
		t.Fatal("a missing model must fail")
	}
	if got := len(fake.Requests()) - n; got != 1 {
		t.Errorf("a missing model took %d requests, want 1", got)
	}
}
