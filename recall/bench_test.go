package recall

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// BenchmarkRecall measures search-mode latency over a synthetic store
// (RECALL_BENCH_MESSAGES messages, default 20000; cyan bench recall is the
// full-size version).
func BenchmarkRecall(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("RECALL_BENCH_MESSAGES")); err == nil {
		n = v
	}
	rep, err := Bench(context.Background(), BenchOptions{Dir: b.TempDir(), Messages: n, Queries: max(b.N, 50), Kinds: []string{IndexFlat, IndexChromem}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for kind, d := range rep.Search {
		b.ReportMetric(float64(pct(d, 0.5).Microseconds())/1000, kind+"-p50-ms")
		b.ReportMetric(float64(pct(d, 0.99).Microseconds())/1000, kind+"-p99-ms")
	}
	// ns/op is one flat-index query (the median), not the build.
	b.ReportMetric(float64(pct(rep.Search[IndexFlat], 0.5).Nanoseconds()), "ns/op")
}
