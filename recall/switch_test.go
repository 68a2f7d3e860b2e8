package recall

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cyan-agent/cyan/internal/embedtest"
)

// TestSwitchingToAModelReembedsInTheBackground: a store indexed with the
// built-in embedder is opened with an Ollama embedding model (the config's
// embed.provider: ollama, embed.model: nomic-embed-text). Run re-embeds the
// history in the background; while the model server is busy, recall keeps
// answering by words; when it is done, vectors of the model answer too,
// and the server's synonyms (its "meaning") find what words cannot.
func TestSwitchingToAModelReembedsInTheBackground(t *testing.T) {
	old, st := newTestIndex(t, Options{})
	fillHistory(t, st)
	syncIndex(t, old)

	fake := &embedtest.Server{Synonyms: map[string]string{"blossoms": "cherry", "sakura": "cherry"}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	arrived, release := fake.Hold(2) // batches wait; single queries pass
	defer release()
	x, _ := newTestIndex(t, Options{Store: st, Embedder: newModelEmbedder(t, "ollama", srv.URL, "nomic-embed-text")})

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := x.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	defer func() { cancel(); wg.Wait() }()

	<-arrived // the first batch is at the model server, held there
	r, err := x.Search(ctx, Query{Prompt: "exam schedule"})
	if err != nil || len(r.Results) == 0 || !strings.Contains(r.Results[0].Text, "exam schedule") {
		t.Fatalf("while re-embedding, recall must answer by words: %+v %v", r, err)
	}
	if s := x.Status(); s.Vectors != 0 || s.Embedded != 0 || s.Embedder != "ollama:nomic-embed-text" {
		t.Fatalf("while the server holds the batch: %+v", s)
	}
	// Nothing shares a word with "sakura", so it is found by meaning only.
	if r, _ := x.Search(ctx, Query{Prompt: "sakura"}); len(r.Results) != 0 {
		t.Fatalf("found by words before the vectors exist: %+v", r.Results)
	}

	release()
	// Sync waits for Run's embedding pass (one at a time) and finds
	// nothing left.
	if err := x.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if s := x.Status(); s.Vectors != len(history) || s.Embedded != st.LastArrival() || s.EmbedUsage == nil || s.EmbedUsage.Texts < int64(len(history)) {
		t.Fatalf("after re-embedding: %+v %+v", s, s.EmbedUsage)
	}
	r, err = x.Search(ctx, Query{Prompt: "sakura"})
	if err != nil || len(r.Results) == 0 || !r.Vector || !strings.Contains(r.Results[0].Text, "cherry trees") {
		t.Fatalf("the model's vectors must find the cherry trees by meaning: %+v %v", r, err)
	}
}
