package store

import (
	"bytes"
	"fmt"
	"os"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"
)

// salvageTable rebuilds, at to, a table of the blocks of a damaged one
// that still read with good checksums: a flipped byte costs its block (a
// few KB), not the table. It needs the table's index (at its end) to
// read; a table cut or zeroed there is lost whole. It returns how many
// blocks were left out and how many entries were kept.
func salvageTable(from, to string, tm badger.TableManifest) (lostBlocks, kept int, err error) {
	mf, err := z.OpenMmapFile(from, os.O_RDONLY, 0)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("its index cannot be read (%s)", oneLine(fmt.Sprint(r), 80))
		}
		_ = mf.Close(-1)
	}()
	t, err := table.OpenTable(mf, table.Options{ChkMode: options.OnBlockRead, Compression: tm.Compression, BlockSize: 4 << 10, ReadOnly: true})
	if err != nil {
		return 0, 0, fmt.Errorf("its index cannot be read (%v)", err)
	}
	starts := t.KeySplits(1<<30, nil) // every block's first key
	b := table.NewTableBuilder(table.Options{BlockSize: 4 << 10, BloomFalsePositive: 0.01, Compression: options.None, TableSize: uint64(t.Size())})
	defer b.Close()
	for i, start := range starts {
		var end []byte
		if i+1 < len(starts) {
			end = []byte(starts[i+1])
		}
		keys, vals := readBlock(t, []byte(start), end)
		if len(keys) == 0 { // a block holds a key at least: this one did not read
			lostBlocks++
		}
		for j := range keys {
			b.Add(keys[j], vals[j], 0)
		}
		kept += len(keys)
	}
	if kept == 0 {
		return lostBlocks, 0, fmt.Errorf("none of its %d blocks reads", len(starts))
	}
	nt, err := table.CreateTable(to, b)
	if err != nil {
		return lostBlocks, kept, err
	}
	_ = nt.MmapFile.Close(-1) // never DecrRef, which deletes the file
	return lostBlocks, kept, nil
}

// readBlock reads the entries from start up to end (the next block's
// first key): nothing when the block does not read, or when reading it
// panics (a damaged length inside it can send Badger's decoder out of
// bounds before the checksum is checked).
func readBlock(t *table.Table, start, end []byte) (keys [][]byte, vals []y.ValueStruct) {
	defer func() {
		if recover() != nil {
			keys, vals = nil, nil
		}
	}()
	it := t.NewIterator(0)
	defer it.Close()
	for it.Seek(start); it.Valid(); it.Next() {
		k := it.Key()
		if end != nil && y.CompareKeys(k, end) >= 0 {
			break
		}
		v := it.ValueCopy()
		keys = append(keys, bytes.Clone(k))
		vals = append(vals, v)
	}
	return keys, vals
}
