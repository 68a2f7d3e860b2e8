package recall

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cyan-agent/cyan/internal/embedtest"
	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
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

// TestVectorsAtWeightZeroAreNeitherMadeNorKept: with the built-in embedder
// at its default weight 0, Run embeds nothing, keeps no vector and removes
// the vectors an earlier configuration kept; turning the weight up
// re-embeds the history in the background while words answer.
func TestVectorsAtWeightZeroAreNeitherMadeNorKept(t *testing.T) {
	// An earlier configuration (weight 0.1) embedded the history.
	before, st := newTestIndex(t, Options{})
	fillHistory(t, st)
	syncIndex(t, before)
	if _, n, _ := before.readState(); n != uint64(len(history)) {
		t.Fatalf("the earlier configuration kept %d vectors", n)
	}

	counted := &countingEmbedder{Embedder: HashEmbedder{}}
	off, _ := newTestIndex(t, Options{Store: st, VectorWeight: hybridOff})
	off.emb = counted
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := off.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	if err := st.Append(t0, &store.Message{Channel: "home", Role: store.RoleUser, User: "nyalia", Text: "the violin recital is on friday"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		r, err := off.Search(ctx, Query{Prompt: "violin recital"})
		return err == nil && len(r.Results) > 0 && !r.Vector && r.Note == ""
	})
	waitFor(t, func() bool { return storedVectors(t, st) == 0 })
	cancel()
	wg.Wait()
	if s := off.Status(); !s.VectorsOff || s.VectorReady || s.Vectors != 0 || s.Embedded != 0 {
		t.Fatalf("status with the vectors off: %+v", s)
	}
	if counted.n != 0 {
		t.Fatalf("%d texts embedded with the vectors off", counted.n)
	}
	if err := off.Sync(context.Background()); err != nil || counted.n != 0 {
		t.Fatalf("Sync embedded %d texts (%v)", counted.n, err)
	}

	// Weight up: the vectors are made again, and words answer meanwhile.
	on, _ := newTestIndex(t, Options{Store: st, VectorWeight: 0.1})
	if err := on.catchUpLexical(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r, err := on.Search(context.Background(), Query{Prompt: "exam schedule"}); err != nil || len(r.Results) == 0 || !strings.Contains(r.Note, "lexical only") {
		t.Fatalf("before the vectors are made again: %+v %v", r, err)
	}
	syncIndex(t, on)
	if s := on.Status(); s.VectorsOff || s.Vectors != len(history)+1 || storedVectors(t, st) != len(history)+1 {
		t.Fatalf("after turning the weight up: %+v, %d stored", s, storedVectors(t, st))
	}
	if r, err := on.Search(context.Background(), Query{Prompt: "violin recital"}); err != nil || !r.Vector {
		t.Fatalf("hybrid after turning the weight up: %+v %v", r, err)
	}
}

// storedVectors counts the embeddings kept in Badger, of any embedder.
func storedVectors(t *testing.T, st *store.Store) int {
	t.Helper()
	n := 0
	err := st.DB().View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: append([]byte(store.PrefixRecall), 'e')})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
