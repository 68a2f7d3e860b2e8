package store

import (
	"runtime/debug"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// TestMemoryOptionsStayWithinTheBudget: what Badger may hold in memory
// (memtables, block cache, index cache) adds up to store.memory_mb, with
// at least two memtables, and a store opens with the smallest budget.
func TestMemoryOptionsStayWithinTheBudget(t *testing.T) {
	for _, mb := range []int{0, 1, MinMemoryMB, 64, 256, 4096} {
		o := memoryOptions(badger.DefaultOptions(""), mb)
		want := int64(max(mb, MinMemoryMB)) << 20
		if mb == 0 {
			want = DefaultMemoryMB << 20
		}
		got := int64(o.NumMemtables)*o.MemTableSize + o.BlockCacheSize + o.IndexCacheSize
		if got > want || got < want-2 || o.NumMemtables < 2 || o.NumMemtables > 5 || o.BlockCacheSize <= 0 || o.IndexCacheSize <= 0 {
			t.Errorf("memory_mb %d: %d memtables of %d, block %d, index %d: %d bytes, want %d", mb, o.NumMemtables, o.MemTableSize, o.BlockCacheSize, o.IndexCacheSize, got, want)
		}
	}
	st, err := Open(Options{Dir: t.TempDir(), MemoryMB: MinMemoryMB})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Append(t0, &Message{Channel: "home", Role: RoleUser, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGoMemoryLimitFollowsTheBudget: the Go memory limit is seven times
// memory_mb (the default's when 0, the least's below it), LimitGoMemory
// sets it, and a GOMEMLIMIT in the environment wins.
func TestGoMemoryLimitFollowsTheBudget(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	tests := []struct {
		name string
		mb   int
		want int64
	}{
		{"default", 0, 448 << 20},
		{"below the least", 1, MinMemoryMB * 7 << 20},
		{"set", 256, 1792 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", "")
			if got := GoMemoryLimit(tt.mb); got != tt.want {
				t.Fatalf("GoMemoryLimit(%d) = %d, want %d", tt.mb, got, tt.want)
			}
			if got := LimitGoMemory(tt.mb); got != tt.want || debug.SetMemoryLimit(-1) != tt.want {
				t.Fatalf("LimitGoMemory(%d) = %d (runtime %d), want %d", tt.mb, got, debug.SetMemoryLimit(-1), tt.want)
			}
		})
	}
	t.Run("GOMEMLIMIT", func(t *testing.T) {
		debug.SetMemoryLimit(3 << 30) // as the runtime does from the variable
		t.Setenv("GOMEMLIMIT", "3GiB")
		if got := LimitGoMemory(64); got != 3<<30 || debug.SetMemoryLimit(-1) != 3<<30 {
			t.Fatalf("LimitGoMemory with GOMEMLIMIT = %d, want the environment's %d", got, int64(3<<30))
		}
	})
}

// TestTablesKeepOneSize: every level's tables are the base size, so a
// compaction's table builders stay small.
func TestTablesKeepOneSize(t *testing.T) {
	o := memoryOptions(badger.DefaultOptions(""), 0)
	if o.TableSizeMultiplier != 1 {
		t.Fatalf("TableSizeMultiplier = %d, want 1", o.TableSizeMultiplier)
	}
}
