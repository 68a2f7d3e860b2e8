package store

import (
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
