package recall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cyan-agent/cyan/store"
)

// The built-in GloVe vectors are not kept in Badger: the vector file
// holds them, and a missing or damaged file is made again from the
// messages' texts, finding exactly what an index that embedded the
// history with its codes on the heap finds; the next start opens it.
func TestGloveVectorsLiveInTheirFileOnly(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fillHistory(t, st)
	gen := newSynth(11)
	importSynth(t, st, gen, 0, 1500)
	cache := filepath.Join(dir, "recall")
	open := func() *Index {
		x, _ := newTestIndex(t, Options{Store: st, CacheDir: cache, Embedder: GloveEmbedder{}})
		syncIndex(t, x)
		return x
	}
	x := open()
	if s := x.Status(); s.Vectors == 0 || s.Embedded != s.Messages {
		t.Fatalf("status %+v", s)
	}
	if kept := storedVectors(t, st); kept != 0 {
		t.Fatalf("%d GloVe vectors kept in Badger; want none", kept)
	}
	x.saveCache()
	file := x.vecFilePath()

	ref, _ := newTestIndex(t, Options{Store: st, Embedder: GloveEmbedder{}})
	syncIndex(t, ref)
	queries := []string{"exam schedule", "cherry trees walk", "painting landscapes"}
	for range 8 {
		queries = append(queries, gen.query())
	}
	same := func(y *Index) {
		t.Helper()
		if a, b := ref.Status().Vectors, y.Status().Vectors; a != b || a == 0 {
			t.Fatalf("vectors: heap %d, file %d", a, b)
		}
		for _, q := range queries {
			a, err := ref.Search(context.Background(), Query{Prompt: q})
			if err != nil {
				t.Fatal(err)
			}
			b, err := y.Search(context.Background(), Query{Prompt: q})
			if err != nil || fmt.Sprint(a.Results) != fmt.Sprint(b.Results) {
				t.Fatalf("%q: heap %v\nfile %v (%v)", q, a.Results, b.Results, err)
			}
		}
	}
	same(x)
	for _, damage := range []string{"garbage", "missing"} {
		t.Run(damage, func(t *testing.T) {
			if damage == "missing" {
				if err := os.Remove(file); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(file, []byte("not a vector file"), 0o600); err != nil {
				t.Fatal(err)
			}
			y := open()
			same(y)
			y.saveCache()
			before, err := os.Stat(file)
			if err != nil {
				t.Fatalf("the file was not made again: %v", err)
			}
			z := open()
			same(z)
			if after, _ := os.Stat(file); !os.SameFile(before, after) {
				t.Fatal("the made-again file was rebuilt at the next start")
			}
		})
	}
}
