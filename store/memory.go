package store

import (
	"os"
	"runtime/debug"

	"github.com/dgraph-io/badger/v4"
)

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
// Every level's tables are BaseTableSize (TableSizeMultiplier 1, not
// Badger's 2). A compaction builds up to eight tables at once and more,
// each in a buffer that starts at twice the table's size and doubles as
// it fills, and Badger keeps eight such buffers pooled for the next: at
// the end of a million-message import they held 422 of the heap's 449
// live MiB with the deeper levels' tables at 4 and 8 MiB, and 199 of 227
// with every table at 2 MiB (cyan bench recall --profile,
// import-heap.pprof). The same bytes are kept in more, smaller tables.
//
// The Go soft memory limit that goes with memory_mb is GoMemoryLimit's.
func memoryOptions(opts badger.Options, mb int) badger.Options {
	if mb <= 0 {
		mb = DefaultMemoryMB
	}
	mb = max(mb, MinMemoryMB)
	total := int64(mb) << 20
	tables := min(max(total/4/memTableSize, 2), 5)
	rest := total - tables*memTableSize
	opts.TableSizeMultiplier = 1
	return opts.
		WithMemTableSize(memTableSize).
		WithNumMemtables(int(tables)).
		WithBlockCacheSize(rest * 2 / 3).
		WithIndexCacheSize(rest / 3).
		WithNumCompactors(2)
}

// goLimitPerMB is the Go soft memory limit per megabyte of memory_mb.
const goLimitPerMB = 7

// GoMemoryLimit is the Go soft memory limit (debug.SetMemoryLimit) for a
// process that holds a store of memory_mb megabytes (0: DefaultMemoryMB):
// seven times it, 448 MiB at the default. Without one, the collector lets
// the heap grow to twice what is live before it runs, and keeps the
// freed pages a while; a bulk import is mostly short-lived garbage
// (Badger's table builders, the decoded batches, the tokens): a
// million-message import and its lexical build peaked at 890 MiB
// resident with 215 MiB of heap live after it, 350–590 MiB of the heap
// idle and not yet returned. Under the limit the collector runs sooner
// as the heap nears it and returns the idle pages. The limit is soft: a
// process whose live heap is above it collects often (at most about half
// its CPU) and keeps working. A million messages' restarted index lives
// in under 200 MiB of heap, about 300 MiB with a model's 768-dimension
// vectors (their codes are in a file). A larger memory_mb raises the
// limit; GOMEMLIMIT replaces it.
func GoMemoryLimit(mb int) int64 {
	if mb <= 0 {
		mb = DefaultMemoryMB
	}
	return int64(max(mb, MinMemoryMB)) * goLimitPerMB << 20
}

// LimitGoMemory sets GoMemoryLimit(mb) as the process's soft memory
// limit, unless the environment's GOMEMLIMIT set one (the runtime reads
// it at start), and returns the limit in force.
func LimitGoMemory(mb int) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	limit := GoMemoryLimit(mb)
	debug.SetMemoryLimit(limit)
	return limit
}
