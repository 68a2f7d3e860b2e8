package recall

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/store"
)

// locomoPath is a LoCoMo file, kept outside the repository: the tests
// that need it run when CYAN_LOCOMO names it.
func locomoPath(t testing.TB) string {
	p := os.Getenv("CYAN_LOCOMO")
	if p == "" {
		t.Skip("no LoCoMo file: set CYAN_LOCOMO to its path to run this test")
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("the LoCoMo file is not at %s (set CYAN_LOCOMO to its path to run this test)", p)
	}
	return p
}

func TestLoCoMoRecall(t *testing.T) {
	data, err := os.ReadFile(locomoPath(t))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	x, err := New(Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := EvalLoCoMo(context.Background(), st, x, data, []int{5, 10, 25, 50})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.Print(&b, "builtin")
	t.Log("\n" + b.String())
	// At or above the README's DRAGON row at every k (and so above BM25).
	for i, floor := range []float64{58.8, 67.5, 79.9, 84.8} {
		if rep.Overall[i] < floor {
			t.Errorf("R@%d = %.1f, below DRAGON's %.1f", rep.Ks[i], rep.Overall[i], floor)
		}
	}
}
