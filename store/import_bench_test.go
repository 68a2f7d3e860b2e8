package store

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"
)

var importMessages = flag.Int("import.messages", 100000, "messages BenchmarkImport imports per iteration")

// BenchmarkImport imports -import.messages messages durably into a real
// data dir, in Import calls of 5,000 over 20 channels with external ids,
// as cyan bench recall does (texts of 5 to 24 words). It reports
// messages per second of wall time and the process's CPU time per
// message (user and system, so Badger's background flushes and
// compactions count).
func BenchmarkImport(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 5000)
	for i := range words {
		words[i] = fmt.Sprintf("w%x", r.Uint32()%0xfffff)
	}
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		s := openDir(b, b.TempDir())
		b.StartTimer()
		const batch = 5000
		for i := 0; i < *importMessages; i += batch {
			b.StopTimer()
			msgs := make([]*Message, min(batch, *importMessages-i))
			for j := range msgs {
				k := i + j
				n := 5 + r.IntN(20)
				parts := make([]string, n)
				for p := range parts {
					parts[p] = words[r.IntN(len(words))]
				}
				msgs[j] = &Message{Channel: fmt.Sprintf("bench-%02d", k%20), Role: RoleUser, User: fmt.Sprintf("user%d", r.IntN(50)),
					Text: strings.Join(parts, " "), Time: t0.Add(time.Duration(k) * 30 * time.Second), ExternalID: fmt.Sprint(k)}
			}
			b.StartTimer()
			c := processCPU()
			if _, err := s.Import(msgs); err != nil {
				b.Fatal(err)
			}
			cpu += processCPU() - c
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	n := float64(b.N * *importMessages)
	b.ReportMetric(n/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/msg")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
