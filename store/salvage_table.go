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

// salvageTableFront rebuilds, at to, a table of the blocks at the front of
// a damaged one that still read, each by its own checksum, without the
// table's index (table_walk.go): what a table cut or overwritten at its
// end still holds. It returns how many blocks and entries were kept and
// how many bytes after them were left out.
func salvageTableFront(from, to string, comp options.CompressionType) (blocks, kept int, lost int64, err error) {
	b, err := os.ReadFile(from)
	if err != nil {
		return 0, 0, 0, err
	}
	w := walkTable(b, comp)
	if len(w.keys) == 0 {
		return 0, 0, int64(len(b)), fmt.Errorf("read from its start, no block reads: %v", w.err)
	}
	tb := table.NewTableBuilder(table.Options{BlockSize: 4 << 10, BloomFalsePositive: 0.01, Compression: options.None, TableSize: uint64(len(b))})
	defer tb.Close()
	for i, k := range w.keys {
		tb.Add(k, w.vals[i], 0)
	}
	nt, err := table.CreateTable(to, tb)
	if err != nil {
		return w.blocks, len(w.keys), int64(len(b) - w.end), err
	}
	_ = nt.MmapFile.Close(-1) // never DecrRef, which deletes the file
	return w.blocks, len(w.keys), int64(len(b) - w.end), nil
}

// salvageDamagedTable rebuilds at to what a table that failed its checks
// (verr) still holds: the blocks its index finds that read, or, when the
// index itself does not read (the table was cut or overwritten at its
// end), the blocks that read from its start, trying each compression in
// kinds. It returns the report's line and whether a table was written.
func salvageDamagedTable(path, to string, tm badger.TableManifest, kinds []options.CompressionType, verr error) (string, bool) {
	lost, kept, serr := salvageTable(path, to, tm)
	if serr == nil {
		return fmt.Sprintf("%s: %d blocks did not read (%v); the %d entries of the others were kept", path, lost, verr, kept), true
	}
	_ = os.Remove(to)
	var ferr error
	for _, c := range kinds {
		blocks, kept, cut, err := salvageTableFront(path, to, c)
		if err == nil {
			return fmt.Sprintf("%s: %v; its index (at its end) does not read, so it was read from its start: its first %d blocks read whole and their %d entries were kept, the %d bytes after them were left out", path, verr, blocks, kept, cut), true
		}
		_ = os.Remove(to)
		if ferr == nil {
			ferr = err
		}
	}
	return fmt.Sprintf("%s: %v; %v; %v", path, verr, serr, ferr), false
}
