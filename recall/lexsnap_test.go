package recall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// TestRestartOpensTheLexicalSnapshot: a stopped index leaves a snapshot
// of its lexical index; the next start opens it instead of reading the
// store (nothing is tokenized again), reads only the messages stored
// after it, and answers exactly as an index built from the store. A torn,
// garbage or stale snapshot (another store's) is thrown away and the index
// is rebuilt from the store.
func TestRestartOpensTheLexicalSnapshot(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "recall")
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	fillHistory(t, st)
	x, _ := newTestIndex(t, Options{Store: st, CacheDir: cache, VectorWeight: hybridOff})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { x.Run(ctx) })
	waitFor(t, func() bool { s := x.Status(); return s.LexicalReady && s.Indexed == s.Messages })
	cancel()
	wg.Wait()
	snap := filepath.Join(cache, "lexical.snap")
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("no snapshot after a clean stop: %v", err)
	}
	// One message arrives while the daemon is down.
	if err := st.Append(t0, &store.Message{Channel: "home", Role: store.RoleUser, User: "nyalia", Text: "the violin recital is on friday"}); err != nil {
		t.Fatal(err)
	}
	fresh, _ := newTestIndex(t, Options{Store: st, VectorWeight: hybridOff})
	syncIndex(t, fresh)

	queries := []string{"exam schedule", "微積分", "試験", "cherry trees walk", "violin recital", "nyalia grades"}
	same := func(t *testing.T, y *Index) {
		t.Helper()
		for _, q := range queries {
			a, err1 := fresh.Search(context.Background(), Query{Prompt: q})
			b, err2 := y.Search(context.Background(), Query{Prompt: q})
			if err1 != nil || err2 != nil || fmt.Sprint(a.Results) != fmt.Sprint(b.Results) {
				t.Fatalf("%q: built %v (%v), opened %v (%v)", q, a.Results, err1, b.Results, err2)
			}
		}
		if a, b := fresh.Status(), y.Status(); a.Documents != b.Documents || b.Indexed != b.Messages {
			t.Fatalf("status built %+v, opened %+v", a, b)
		}
	}

	t.Run("opened", func(t *testing.T) {
		y, _ := newTestIndex(t, Options{Store: st, CacheDir: cache, VectorWeight: hybridOff})
		if err := y.catchUpLexical(context.Background()); err != nil {
			t.Fatal(err)
		}
		if y.scanned.Load() != st.LastArrival()-1 {
			t.Fatalf("read from %d: the snapshot was not opened", y.scanned.Load())
		}
		same(t, y)
	})
	good, _ := os.ReadFile(snap)
	for _, damage := range []string{"torn", "flipped", "garbage", "another store"} {
		t.Run(damage, func(t *testing.T) {
			switch damage {
			case "torn":
				os.WriteFile(snap, good[:len(good)/2], 0o600)
			case "flipped":
				b := append([]byte(nil), good...)
				b[len(b)/2] ^= 0x40
				os.WriteFile(snap, b, 0o600)
			case "garbage":
				os.WriteFile(snap, []byte("cyanlex\x00 but not really"), 0o600)
			case "another store":
				other, _ := newTestIndex(t, Options{VectorWeight: hybridOff, CacheDir: filepath.Join(t.TempDir(), "r")})
				for i := range 30 { // more arrivals than st has: stale by cursor
					other.st.Append(t0.Add(time.Duration(i)*time.Minute), &store.Message{Channel: "home", Role: store.RoleUser, Text: fmt.Sprint("other line ", i)})
				}
				syncIndex(t, other)
				other.lexReady.Store(true)
				other.lexDirty.Store(true)
				if err := other.writeLexical(snap); err != nil {
					t.Fatal(err)
				}
			}
			y, _ := newTestIndex(t, Options{Store: st, CacheDir: cache, VectorWeight: hybridOff})
			if err := y.catchUpLexical(context.Background()); err != nil {
				t.Fatal(err)
			}
			if y.scanned.Load() != st.LastArrival() {
				t.Fatalf("a %s snapshot was opened (read %d of %d)", damage, y.scanned.Load(), st.LastArrival())
			}
			if _, err := os.Stat(snap); !os.IsNotExist(err) {
				t.Fatalf("the %s snapshot was kept: %v", damage, err)
			}
			same(t, y)
		})
	}
	st.Close()
}

// FuzzReadLexical: a damaged snapshot is refused with errSnap, never a
// panic or an allocation its size cannot hold.
func FuzzReadLexical(f *testing.F) {
	x, st := newTestIndex(&testing.T{}, Options{VectorWeight: hybridOff})
	for i, h := range history {
		st.Append(t0.Add(time.Duration(i)*time.Minute), &store.Message{Channel: h.ch, Role: store.RoleUser, User: h.user, Text: h.text})
	}
	x.Sync(context.Background())
	path := filepath.Join(f.TempDir(), "seed")
	x.lexReady.Store(true)
	if err := x.writeLexical(path); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	f.Add(good)
	f.Add(good[:len(good)-4])
	f.Add([]byte(lexSnapMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "snap")
		os.WriteFile(p, b, 0o600)
		c, _, err := readLexical(p)
		if err == nil && c.byID.n != len(c.docs) {
			t.Fatalf("%d ids for %d documents", c.byID.n, len(c.docs))
		}
	})
}
