package recall

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/cyan-agent/cyan/internal/embedtest"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
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

// benchRecords is a record source of n events over three channels and
// n/100 theories of forty lines each.
func benchRecords(n int) *fakeRecords {
	words := strings.Fields("garden exam physics tomatoes trip lake camping birthday project deadline piano lesson cat doctor train concert movie recipe")
	recs := make([]packets.Record, 0, n+n/100)
	for i := range n {
		recs = append(recs, packets.Record{Kind: packets.RecordEvent, ID: fmt.Sprintf("ev-%d", i), Channel: fmt.Sprintf("ch-%d", i%3),
			Source: fmt.Sprintf("event %d", 20200101+i%3000), Time: t0.Add(time.Duration(i) * time.Hour),
			Text: fmt.Sprintf("amy and I talked about the %s and the %s, record %d", words[i%len(words)], words[(i*7)%len(words)], i)})
	}
	for i := range n / 100 {
		recs = append(recs, packets.Record{Kind: packets.RecordTheory, ID: fmt.Sprintf("th-%d", i), Source: fmt.Sprintf("theory %d", i), Time: t0, Text: theoryArticle()})
	}
	return &fakeRecords{recs: recs}
}

// BenchmarkRecordsRebuild measures a full rebuild of the records' side
// (10,000 events and 100 theories, the built-in embedder, every text new:
// the first build; later ones embed only changed texts).
func BenchmarkRecordsRebuild(b *testing.B) {
	src := benchRecords(10000)
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for b.Loop() {
		x, err := New(Options{Store: st, Records: src})
		if err != nil {
			b.Fatal(err)
		}
		if err := x.SyncRecords(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordsRebuildCached is a rebuild after one record changed.
func BenchmarkRecordsRebuildCached(b *testing.B) {
	src := benchRecords(10000)
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	x, err := New(Options{Store: st, Records: src})
	if err != nil {
		b.Fatal(err)
	}
	if err := x.SyncRecords(ctx); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		src.recs[0].Text = fmt.Sprintf("changed %d", i)
		if err := x.SyncRecords(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchWithRecords is one search-mode query over 20,000
// messages and the records above, in one channel.
func BenchmarkSearchWithRecords(b *testing.B) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var msgs []*store.Message
	for i := range 20000 {
		msgs = append(msgs, &store.Message{Channel: fmt.Sprintf("ch-%d", i%3), Role: store.RoleUser, User: "amy",
			Text: fmt.Sprintf("message %d about the weather, lunch and the %d bus", i, i%97), Time: t0.Add(time.Duration(i) * time.Minute)})
	}
	if _, err := st.Import(msgs); err != nil {
		b.Fatal(err)
	}
	for _, withRecords := range []bool{false, true} {
		o := Options{Store: st}
		name := "messages-only"
		if withRecords {
			o.Records, name = benchRecords(10000), "with-records"
		}
		x, err := New(o)
		if err != nil {
			b.Fatal(err)
		}
		if err := x.Sync(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := x.Search(context.Background(), Query{Prompt: "camping trip at the lake", Channel: "ch-1", MaxResults: 10}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestBenchRestartsOverTheHistory: the benchmark's restart reads the
// history it built with a fresh index in the default configuration — the
// built-in GloVe embedder and a model embedder (the fake server at 768
// dimensions) with their vectors loaded, not made again, HashEmbedder
// with its vectors off — and reports resident memory: the import's and
// the vectors' peaks each on its own line.
func TestBenchRestartsOverTheHistory(t *testing.T) {
	fake := &embedtest.Server{Dims: 768, Models: []string{"m"}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	for _, emb := range []Embedder{nil, HashEmbedder{}, newModelEmbedder(t, "ollama", srv.URL, "m")} {
		rep, err := Bench(context.Background(), BenchOptions{Dir: t.TempDir(), Messages: 200, Queries: 8, Embedder: emb, SettleIdle: time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.RestartWords <= 0 || len(rep.Restarted) != 8 || rep.SteadyRSS == 0 || rep.PeakRSS == 0 || rep.ImportPeakRSS == 0 || rep.VectorsPeakRSS == 0 ||
			rep.PeakRSS != max(rep.ImportPeakRSS, rep.VectorsPeakRSS) || rep.VectorsEmbedder == "" {
			t.Fatalf("%v: %+v", emb, rep)
		}
		if on := emb == nil || !isBuiltin(emb); on != (rep.RestartVectors > 0) {
			t.Fatalf("%v: vectors loaded after %v", emb, rep.RestartVectors)
		}
		var b strings.Builder
		rep.Print(&b)
		for _, line := range []string{"resident steady, restarted", "resident peak, import + words", "resident peak, vectors", "import + words peak", "words only p99 (vectors loading)", "vectors build peak (" + rep.VectorsEmbedder + ")"} {
			if !strings.Contains(b.String(), line) {
				t.Fatalf("no %q in the report:\n%s", line, b.String())
			}
		}
		if !strings.Contains(b.String(), "resident steady, restarted") {
			t.Fatalf("report:\n%s", b.String())
		}
	}
	// The messages once, and the queries of the hybrid rows (all, one
	// channel) and of the restart: the restart loads the vectors.
	if texts := fake.Texts(); texts != 200+3*8 {
		t.Fatalf("the model embedded %d texts, want the 200 messages once and 24 queries", texts)
	}
}
