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
//
// No Go soft memory limit (debug.SetMemoryLimit) is set for memory_mb: a
// limit of 8× it (512 MiB at the default) was tried and, with vectors on
// over a million messages (more live heap than the limit), kept the
// collector running: hybrid search p50 went from 33 to 85 ms and the
// vector load from 4.7 to 11.1 s. GOMEMLIMIT, which Go reads itself,
// sets one where the history is known to fit.
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
