package store

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkAppendDurable stores live messages durably (SyncWrites, a real
// data dir), one Append per message as a bridge or the API does, from 1,
// 4 and 16 writers at once (several chats, bridges and the API): each
// writer appends as soon as its previous Append returned. It reports the
// latency of one Append (p50, p99) and the messages per second: what an
// acknowledged message costs when writers meet at the disk.
//
//	go test ./store -run XXX -bench AppendDurable -benchtime 2000x
func BenchmarkAppendDurable(b *testing.B) {
	for _, writers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := openDir(b, b.TempDir())
			defer s.Close()
			var (
				mu   sync.Mutex
				lat  []time.Duration
				next int
				wg   sync.WaitGroup
			)
			b.ResetTimer()
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						mu.Lock()
						n := next
						next++
						mu.Unlock()
						if n >= b.N {
							return
						}
						m := &Message{Channel: fmt.Sprintf("qq:group:%d", w), Role: RoleUser, User: "amy", UserID: "qq:1",
							Text: fmt.Sprintf("message %d, about the weather and what to cook tonight", n), ExternalID: fmt.Sprint(n)}
						t := time.Now()
						if err := s.Append(t, m); err != nil {
							b.Error(err)
							return
						}
						d := time.Since(t)
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			slices.Sort(lat)
			if n := len(lat); n > 0 {
				b.ReportMetric(float64(lat[n/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[n*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
