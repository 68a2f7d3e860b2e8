package store

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkAppendHistory stores history durably (SyncWrites, a real data
// dir) in batches of 1,000, as an importer would; it reports messages/s.
func BenchmarkAppendHistory(b *testing.B) {
	s := openDir(b, b.TempDir())
	defer s.Close()
	const batch = 1000
	at := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	msgs := make([]*Message, batch)
	n := 0
	b.ResetTimer()
	for b.Loop() {
		for i := range msgs {
			at = at.Add(30 * time.Second)
			msgs[i] = &Message{Channel: "import", Role: RoleUser, User: "Caroline", Text: fmt.Sprintf("turn %d: hey Mel, good to see you! how have you been?", n), Time: at, ExternalID: fmt.Sprintf("D1:%d", n)}
			n++
		}
		if err := s.AppendHistory(msgs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}
