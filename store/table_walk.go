package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/proto"
)

// A table's blocks, read from its front without its index: what is left
// of a table whose end (the index, its length, its checksum) was cut or
// overwritten. The layout, as written by Builder.finishBlock, Builder.Done
// and buildData.Copy in table/builder.go and read by Table.block in
// table/table.go of github.com/dgraph-io/badger/v4 v4.9.6:
//
//	table: block | block | … | index | u32 index length | checksum | u32 checksum length
//	block: entry | entry | … | u32 offsets (native order) | u32 count | checksum | u32 checksum length
//	entry: u16 overlap | u16 diff (native order) | diff bytes of the key | value
//	value: meta | user meta | uvarint expiresAt | value bytes (y.ValueStruct)
//
// Each entry's key is the first n bytes of the block's first key (n its
// overlap) followed by its diff; its value runs to the next entry, the
// last one's to the offsets. The u32 lengths and the count are big-endian;
// the checksum is a pb.Checksum of the bytes from the block's start to the
// end of the count. A compressed table compresses each whole block
// (Snappy's block format: a uvarint of the decoded length, then literals
// and copies), so a block ends where its decoding does. The blocks follow
// one another with nothing between, so the walk reads each block whose
// checksum holds, from the first on, and stops at the first that does not.

// maxBlock bounds a block's decoded size: a block holds entries of 4 KB,
// or a single value up to the value log's threshold (1 MB) and its key.
const maxBlock = 4 << 20

// maxTrailers bounds the trailers an uncompressed block's search checks:
// a block's offsets, each below the next and below the offsets, seldom
// read as a trailer elsewhere in it.
const maxTrailers = 64

// walkedTable is what walkTable read.
type walkedTable struct {
	keys   [][]byte
	vals   []y.ValueStruct
	blocks int   // the blocks that read
	end    int   // the byte after the last of them
	err    error // why the block at end did not read
}

// walkTable reads the blocks of a table from its start, each checked by
// its own checksum, up to the first that does not read. It never panics,
// whatever b holds.
func walkTable(b []byte, comp options.CompressionType) walkedTable {
	var w walkedTable
	for w.end < len(b) {
		data, n, err := readFrontBlock(b[w.end:], comp)
		if err == nil {
			var keys [][]byte
			var vals []y.ValueStruct
			keys, vals, err = blockEntries(data)
			if err == nil && len(w.keys) > 0 && len(keys) > 0 && y.CompareKeys(w.keys[len(w.keys)-1], keys[0]) >= 0 {
				err = errors.New("its first key does not follow the block before it")
			}
			if err == nil {
				w.keys, w.vals = append(w.keys, keys...), append(w.vals, vals...)
				w.blocks++
				w.end += n
				continue
			}
		}
		w.err = fmt.Errorf("the block at byte %d does not read (%v)", w.end, err)
		break
	}
	return w
}

// readFrontBlock finds the block that starts b and returns its checked
// data (up to the end of its count) and its length in b.
func readFrontBlock(b []byte, comp options.CompressionType) ([]byte, int, error) {
	switch comp {
	case options.None:
		return findPlainBlock(b)
	case options.Snappy:
		n, err := snappyLen(b)
		if err != nil {
			return nil, 0, err
		}
		dec, err := snappy.Decode(nil, b[:n])
		if err != nil {
			return nil, 0, err
		}
		data, err := checkBlock(dec)
		return data, n, err
	}
	return nil, 0, fmt.Errorf("its blocks are compressed with %v; only Snappy and uncompressed blocks are read without the index", comp)
}

// findPlainBlock finds the end of an uncompressed block: the first length
// where its trailer reads and its checksum holds. Only the first
// maxTrailers lengths whose trailer reads have their checksum computed, so
// damaged bytes cannot make the search quadratic.
func findPlainBlock(b []byte) ([]byte, int, error) {
	tried := 0
	for end := 12; end <= min(len(b), maxBlock) && tried < maxTrailers; end++ {
		chk := int(binary.BigEndian.Uint32(b[end-4:]))
		if chk > 16 || end-12-chk < 0 {
			continue
		}
		// Before the checksum, the offsets: a count of them that fits,
		// the first 0, the last before them.
		data := b[:end-4-chk]
		count := int(binary.BigEndian.Uint32(data[len(data)-4:]))
		start := len(data) - 4 - 4*count
		if count == 0 || count > len(data)/4 || start < 4 || binary.NativeEndian.Uint32(data[start:]) != 0 ||
			int(binary.NativeEndian.Uint32(data[start+4*(count-1):])) >= start {
			continue
		}
		tried++
		if data, err := checkBlock(b[:end]); err == nil {
			return data, end, nil
		}
	}
	return nil, 0, errors.New("no block trailer with a good checksum")
}

// checkBlock reads a block's trailer and checks its checksum; it returns
// the data the checksum covers.
func checkBlock(blk []byte) ([]byte, error) {
	if len(blk) < 8 {
		return nil, errors.New("shorter than a block's trailer")
	}
	pos := len(blk) - 4
	chk := int(binary.BigEndian.Uint32(blk[pos:]))
	if chk > pos-4 {
		return nil, errors.New("its checksum length is past its start")
	}
	pos -= chk
	var cs pb.Checksum
	if err := proto.Unmarshal(blk[pos:pos+chk], &cs); err != nil {
		return nil, fmt.Errorf("its checksum does not read (%v)", err)
	}
	if cs.Algo != pb.Checksum_CRC32C && cs.Algo != pb.Checksum_XXHash64 {
		return nil, fmt.Errorf("its checksum is of an unknown kind %d", cs.Algo)
	}
	data := blk[:pos]
	if err := y.VerifyChecksum(data, &cs); err != nil {
		return nil, err
	}
	return data, nil
}

// blockEntries decodes the entries of a block's checked data.
func blockEntries(data []byte) (keys [][]byte, vals []y.ValueStruct, err error) {
	pos := len(data) - 4
	count := int(binary.BigEndian.Uint32(data[pos:]))
	if count == 0 || count > pos/4 {
		return nil, nil, fmt.Errorf("it counts %d entries", count)
	}
	start := pos - 4*count // where the offsets start: the entries end
	off := func(i int) int {
		if i == count {
			return start
		}
		return int(binary.NativeEndian.Uint32(data[start+4*i:]))
	}
	var base []byte
	for i := range count {
		from, to := off(i), off(i+1)
		if (i == 0 && from != 0) || from+4 > to || to > start {
			return nil, nil, fmt.Errorf("entry %d's offsets %d–%d do not fit", i, from, to)
		}
		overlap := int(binary.NativeEndian.Uint16(data[from:]))
		diff := int(binary.NativeEndian.Uint16(data[from+2:]))
		p := from + 4
		if overlap > len(base) || (i == 0 && overlap != 0) || p+diff > to {
			return nil, nil, fmt.Errorf("entry %d's key does not fit", i)
		}
		key := make([]byte, 0, overlap+diff)
		key = append(append(key, base[:overlap]...), data[p:p+diff]...)
		if i == 0 {
			base = key
		}
		if len(key) <= 8 {
			return nil, nil, fmt.Errorf("entry %d's key is too short to hold a version", i)
		}
		if len(keys) > 0 && y.CompareKeys(keys[len(keys)-1], key) >= 0 {
			return nil, nil, fmt.Errorf("entry %d's key does not follow the one before", i)
		}
		v := data[p+diff : to]
		if len(v) < 3 {
			return nil, nil, fmt.Errorf("entry %d's value is cut", i)
		}
		if _, k := binary.Uvarint(v[2:]); k <= 0 {
			return nil, nil, fmt.Errorf("entry %d's expiry does not read", i)
		}
		var vs y.ValueStruct
		vs.Decode(bytes.Clone(v))
		keys, vals = append(keys, key), append(vals, vs)
	}
	return keys, vals, nil
}

// snappyLen is the length of the Snappy block that starts b: its elements
// are walked until they decode to the length it starts with (Snappy's
// block format, as klauspost/compress/snappy and s2 read it).
func snappyLen(b []byte) (int, error) {
	want, k := binary.Uvarint(b)
	if k <= 0 || want > maxBlock {
		return 0, errors.New("it does not start with a block's decoded length")
	}
	p, got := k, uint64(0)
	for got < want {
		if p >= len(b) {
			return 0, errors.New("it is cut")
		}
		tag := b[p]
		var length, offset uint64
		switch tag & 3 {
		case 0: // a literal
			x := uint64(tag >> 2)
			p++
			if x >= 60 {
				n := int(x - 59)
				if p+n > len(b) {
					return 0, errors.New("it is cut")
				}
				x = 0
				for i := range n {
					x |= uint64(b[p+i]) << (8 * i)
				}
				p += n
			}
			length = x + 1
			if length > uint64(len(b)-p) {
				return 0, errors.New("it is cut")
			}
			p += int(length)
			got += length
			continue
		case 1:
			if p+2 > len(b) {
				return 0, errors.New("it is cut")
			}
			length, offset = 4+uint64(tag>>2)&7, uint64(tag&0xe0)<<3|uint64(b[p+1])
			p += 2
		case 2:
			if p+3 > len(b) {
				return 0, errors.New("it is cut")
			}
			length, offset = 1+uint64(tag>>2), uint64(binary.LittleEndian.Uint16(b[p+1:]))
			p += 3
		case 3:
			if p+5 > len(b) {
				return 0, errors.New("it is cut")
			}
			length, offset = 1+uint64(tag>>2), uint64(binary.LittleEndian.Uint32(b[p+1:]))
			p += 5
		}
		if offset == 0 || offset > got {
			return 0, errors.New("a copy reaches before its start")
		}
		got += length
	}
	if got != want {
		return 0, errors.New("it decodes past its length")
	}
	return p, nil
}
