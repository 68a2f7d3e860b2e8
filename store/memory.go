package store

import "github.com/dgraph-io/badger/v4"

// DefaultMemoryMB is what Badger may hold in memory by default (config
// store.memory_mb): sized for a 1 GB VPS, where the daemon, its recall
// index and the page cache share the rest.
const DefaultMemoryMB = 64

// MinMemoryMB is the least memory_mb: the memtables alone take 16 MiB.
const MinMemoryMB = 24

// memoryOptions splits mb megabytes among Badger's memtables (of
// memTableSize each, two to five of them: fewer stall bursts of writes
// sooner), its block cache (two thirds of the rest: decompressed table
// blocks, the reads of messages and the arrival log) and its index cache
// (one third: table indexes and bloom filters; without it each open table
// keeps its index on the heap, uncounted).
//
// It also runs two compactors, Badger's least, not its four: each
// compaction builds up to eight tables at once, each in a buffer of twice
// the table's size, and after a restart over a million messages four
// compactors held about 100 MiB of such buffers while they levelled the
// tree (measured with cyan bench recall --profile). Two are what a
// two-core VPS can run anyway; a long import levels a little later.
func memoryOptions(opts badger.Options, mb int) badger.Options {
	if mb <= 0 {
		mb = DefaultMemoryMB
	}
	mb = max(mb, MinMemoryMB)
	total := int64(mb) << 20
	tables := min(max(total/4/memTableSize, 2), 5)
	rest := total - tables*memTableSize
	return opts.
		WithMemTableSize(memTableSize).
		WithNumMemtables(int(tables)).
		WithBlockCacheSize(rest * 2 / 3).
		WithIndexCacheSize(rest / 3).
		WithNumCompactors(2)
}

// GoMemoryLimit is the Go runtime's soft memory limit (debug.SetMemoryLimit)
// that cyan serve sets for a store.memory_mb of mb, unless GOMEMLIMIT is
// set: eight times it, 512 MiB at the default 64, the budget of the small
// VPS the default is sized for. Without a limit the collector lets the
// heap grow to twice what is live before it collects, and a daemon whose
// recall index holds 200 MiB would sit at 400 MiB of heap between
// collections; with it, the heap is collected as it nears the limit, and
// a history that outgrows the limit costs collector time (Go caps it at
// half the CPU), not memory. A bigger machine raises memory_mb, and the
// limit with it.
func GoMemoryLimit(mb int) int64 {
	if mb <= 0 {
		mb = DefaultMemoryMB
	}
	return int64(max(mb, MinMemoryMB)) << 23
}
