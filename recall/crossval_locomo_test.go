package recall

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestLoCoMoCrossValidated runs the 5-fold cross-validation on the LoCoMo
// development file: held-out recall at or above DRAGON at every k, and no
// category under the data's BM25 baseline.
func TestLoCoMoCrossValidated(t *testing.T) {
	if testing.Short() {
		t.Skip("the LoCoMo cross-validation takes a minute; run without -short")
	}
	data, err := os.ReadFile(locomoPath(t))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := LoCoMoCV(context.Background(), data, LoCoMoCVOptions{Folds: 5, Ks: []int{5, 10, 25, 50}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.Print(&b, GloveEmbedder{}.ID())
	t.Log("\n" + b.String())
	for _, s := range rep.Below() {
		t.Error(s)
	}
	if !rep.Shipped {
		t.Errorf("the procedure picks %s on all the conversations, which is not defaultParams", rep.InSampleS)
	}
}
