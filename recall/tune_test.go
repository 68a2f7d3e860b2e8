package recall

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/cyan-agent/cyan/store"
)

func envf(k string, d float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(k), 64); err == nil {
		return v
	}
	return d
}

func TestTuneLoCoMo(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(locomoPath(t))
	st, _ := store.Open(store.Options{InMemory: true})
	defer st.Close()
	x, _ := New(Options{Store: st, Embedder: HashEmbedder{Dims: int(envf("DIMS", 256))}})
	x.p.vecWeight = envf("VW", x.p.vecWeight)
	x.p.lexWeight = envf("LW", x.p.lexWeight)
	x.p.neighborBoost = envf("NB", x.p.neighborBoost)
	x.p.rrfK = envf("RRFK", x.p.rrfK)
	x.p.k1 = envf("K1", x.p.k1)
	x.p.b = envf("B", x.p.b)
	x.p.prfDocs = int(envf("PRFD", float64(x.p.prfDocs)))
	x.p.prfTerms = int(envf("PRFT", float64(x.p.prfTerms)))
	x.p.prfWeight = envf("PRFW", x.p.prfWeight)
	x.p.prfMix = envf("PRFM", x.p.prfMix)
	x.p.nextBoost = envf("NX", x.p.nextBoost)
	rep, err := EvalLoCoMo(context.Background(), st, x, data, []int{5, 10, 25, 50})
	if err != nil {
		t.Fatal(err)
	}
	rep.Print(os.Stdout, fmt.Sprintf("%+v", x.p))
}
