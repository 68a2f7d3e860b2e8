package generate

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

func TestRingKeepsTheNewest(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ring, err := OpenTraces(st, 3)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 5 {
		now := base.Add(time.Duration(i) * time.Second)
		tr := &Trace{ID: ring.newID(now), Kind: "generate", Name: fmt.Sprintf("n%d", i), Channel: []string{"a", "b"}[i%2], Time: now,
			Validation: Validation{OK: i != 3}, Attempts: []Attempt{{N: 1}}}
		if err := ring.Put(tr); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tr.ID)
	}
	if ring.Len() != 3 {
		t.Fatalf("Len = %d, want 3", ring.Len())
	}
	if _, err := ring.Get(ids[1]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the oldest must be gone: %v", err)
	}
	got, err := ring.Get(ids[4])
	if err != nil || got.Name != "n4" {
		t.Fatalf("Get newest: %+v %v", got, err)
	}
	all, err := ring.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Name != "n2" || all[2].Name != "n4" || all[1].OK {
		t.Errorf("List = %+v, want n2 n3 n4 oldest first", all)
	}
	a, _ := ring.List(Filter{Channel: "a"})
	if len(a) != 2 || a[0].Name != "n2" || a[1].Name != "n4" {
		t.Errorf("channel a: %+v", a)
	}
	last, _ := ring.List(Filter{Last: 1})
	if len(last) != 1 || last[0].Name != "n4" {
		t.Errorf("last 1: %+v", last)
	}
	named, _ := ring.List(Filter{Name: "n3"})
	if len(named) != 1 || named[0].ID != ids[3] {
		t.Errorf("by name: %+v", named)
	}
	// Putting the same trace again does not count twice.
	if err := ring.Put(got); err != nil || ring.Len() != 3 {
		t.Errorf("re-put: %v, Len %d", err, ring.Len())
	}
	if _, err := ring.Get("nope"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("bad id: %v", err)
	}
}

func TestRingSurvivesRestartAndShrinks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := OpenTraces(st, 10)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 6 {
		if err := ring.Put(&Trace{ID: ring.newID(now), Kind: "generate", Time: now}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	st, err = store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ring, err = OpenTraces(st, 4)
	if err != nil {
		t.Fatal(err)
	}
	if ring.Len() != 4 {
		t.Errorf("Len after reopening with a lower bound = %d, want 4", ring.Len())
	}
	if l, _ := ring.List(Filter{Last: 100}); len(l) != 4 {
		t.Errorf("listed %d", len(l))
	}
}
