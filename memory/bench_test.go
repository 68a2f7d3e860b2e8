package memory

import (
	"fmt"
	"testing"
)

// BenchmarkTurn measures main-observer's per-turn work that does not call a
// model — passive GC over every item and rendering the workspace section —
// with 10k items: "steady" has 50 of them in the workspace (active GC keeps
// it within budget; the rest were let go), "all-held" has all 10k in it.
func BenchmarkTurn(b *testing.B) {
	for _, held := range []int{50, 10_000} {
		name := "steady"
		if held == 10_000 {
			name = "all-held"
		}
		b.Run(name, func(b *testing.B) {
			cfg := testConfig()
			cfg.EvictBelow = 0 // nothing leaves during the benchmark
			cfg.InitialStability = 1e6
			m := open(b, benchStore(b), cfg, nil)
			m.mu.Lock()
			for i := range 10_000 {
				id := m.newID("w")
				it := &Item{ID: id, Kind: KindNote, Content: fmt.Sprintf("note %d: something worth keeping about topic %d", i, i%97),
					InWorkspace: i < held, Origin: private, State: State{S: 10 + float64(i%50), A: 5, LastT: int64(i % 300)}}
				m.items[id] = it
				m.order = append(m.order, it)
			}
			m.turn = 400
			m.mu.Unlock()
			m.WorkspaceSection(Viewer{Channel: "home"}, cfg.Budget) // warm the line cache, as a running daemon has
			b.ResetTimer()
			for b.Loop() {
				if _, err := m.PassiveGC(); err != nil {
					b.Fatal(err)
				}
				if body, _ := m.WorkspaceSection(Viewer{Channel: "home"}, cfg.Budget); body == "" {
					b.Fatal("empty workspace")
				}
			}
		})
	}
}
