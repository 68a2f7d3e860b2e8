package archive

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// history stores n messages in 20 channels.
func history(b *testing.B, n int) *store.Store {
	b.Helper()
	st, err := store.Open(store.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)
	for i := 0; i < n; i += 1000 {
		var batch []*store.Message
		for j := i; j < min(n, i+1000); j++ {
			batch = append(batch, &store.Message{Channel: fmt.Sprint("c", j%20), User: "ann", Text: fmt.Sprintf("message %d: how was the exam? it went well, thanks", j),
				Time: at.Add(time.Duration(j) * time.Minute)})
		}
		if _, err := st.Import(batch); err != nil {
			b.Fatal(err)
		}
	}
	return st
}

// BenchmarkExport100k exports a store of 100,000 messages; it reports
// messages a second.
func BenchmarkExport100k(b *testing.B) {
	st := history(b, 100_000)
	defer st.Close()
	for b.Loop() {
		if _, err := Export(st, io.Discard, "bench", t0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(100_000*b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkBackup100k backs up a store of 100,000 messages; it reports
// the backup's size.
func BenchmarkBackup100k(b *testing.B) {
	st := history(b, 100_000)
	defer st.Close()
	var size int64
	for b.Loop() {
		cw := &countWriter{w: io.Discard}
		if _, err := WriteBackup(st, cw, "bench", t0); err != nil {
			b.Fatal(err)
		}
		size = cw.n
	}
	b.ReportMetric(float64(size)/(1<<20), "MB")
	b.ReportMetric(float64(100_000*b.N)/b.Elapsed().Seconds(), "msgs/s")
}
