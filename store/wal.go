package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
)

// The layout of Badger's write-ahead logs (*.mem), as written by
// logFile.bootstrap and logFile.encodeEntry in memtable.go and read back
// by logFile.iterate and safeRead.Entry (value.go) of
// github.com/dgraph-io/badger/v4 v4.9.6:
//
//	keyID (8 bytes) | baseIV (12 random bytes) | entry | entry | …
//	entry: meta, userMeta, uvarint klen, uvarint vlen, uvarint expiresAt,
//	       key, value, CRC-32C (big-endian) of all before it
//
// Every entry of a transaction carries bitTxn; the transaction ends with
// an entry carrying bitFinTxn. Badger replays entries up to the first one
// that does not read (a zero, a bad checksum) and silently drops the rest
// of the file — after a kill that rest is the unfinished transaction at
// the end, never a finished one.
const (
	walHeaderSize = 20
	walBitTxn     = 1 << 6
	walBitFinTxn  = 1 << 7
)

// walScan is what scanWAL found in a write-ahead log.
type walScan struct {
	size     int64
	end      int64  // the end of the last finished transaction
	zeroIV   bool   // the header is zeros: the file was zeroed
	keyID    uint64 // the header's encryption key: 0, as cyan does not encrypt
	beyond   int64  // > 0: a finished transaction starts there, after end
	tooShort bool   // shorter than its header
}

// damage says what is wrong with the log, "" when Badger can replay it
// whole. full is the size Badger gives a new log (twice the memtable).
func (w walScan) damage(full int64) string {
	switch {
	case w.tooShort:
		return fmt.Sprintf("it is %d bytes long, shorter than its 20-byte header: it was cut", w.size)
	case w.zeroIV:
		return "its header is all zeros: the file was zeroed"
	case w.keyID != 0:
		return fmt.Sprintf("its header names the encryption key %d, but cyan does not encrypt: the header was overwritten", w.keyID)
	case w.beyond > 0:
		return fmt.Sprintf("it cannot be read past byte %d, but finished writes follow at byte %d: it was damaged there, and Badger would drop everything after", w.end, w.beyond)
	case w.size != full && w.size != w.end:
		return fmt.Sprintf("it is %d bytes long, where a log is %d bytes (or exactly as long as the writes it holds, %d): it was cut", w.size, full, w.end)
	}
	return ""
}

func scanWALFile(path string) (walScan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return walScan{}, err
	}
	return scanLog(b, false), nil
}

// scanVlogFile scans a value log: the same layout, but its entries carry
// no transaction marks (value.go, valueLog.write), so each entry that
// reads is a write kept.
func scanVlogFile(path string) (walScan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return walScan{}, err
	}
	return scanLog(b, true), nil
}

func scanLog(b []byte, vlog bool) walScan {
	w := walScan{size: int64(len(b))}
	if len(b) < walHeaderSize {
		w.tooShort = true
		return w
	}
	w.zeroIV = allZero(b[8:walHeaderSize])
	w.keyID = binary.BigEndian.Uint64(b[:8])
	off := walHeaderSize
	w.end = int64(off)
	inTxn := false
	for {
		e, n := walEntry(b, off)
		if n == 0 {
			break
		}
		off += n
		switch {
		case e.meta&walBitFinTxn != 0:
			if !inTxn {
				// A finish with no transaction: Badger's replay stops too.
				w.end = int64(off)
			}
			inTxn = false
			w.end = int64(off)
		case e.meta&walBitTxn != 0:
			inTxn = true
		default:
			w.end = int64(off)
		}
	}
	// Past the end, a kill leaves at most the unfinished transaction (in a
	// value log, the entry being written); a finished transaction (an
	// entry) later on means the file was damaged at w.end.
	// The files are preallocated (a value log to 256 MB), so most of what
	// follows the end is zeros: a run of them is passed in one step, as
	// no entry starts within three bytes of zeros (plausibleEntry).
	for o := int(w.end) + 1; o < len(b); o++ {
		if z := zeroRun(b, o); z > 2 {
			o += z - 3
			continue
		}
		if !plausibleEntry(b[o:], vlog) {
			continue
		}
		if _, n := walEntry(b, o); n > 0 {
			w.beyond = int64(o)
			break
		}
	}
	return w
}

// zeroRun is how many zero bytes b holds from o on, read eight at a time.
func zeroRun(b []byte, o int) int {
	i := o
	for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:]) == 0 {
		i += 8
	}
	for i < len(b) && b[i] == 0 {
		i++
	}
	return i - o
}

// txnKey starts the key of Badger's transaction-finish entry.
const txnKey = "!badger!txn"

// plausibleEntry is a cheap test, before the checksum, that an entry of
// the store could start at b (one of its first three bytes is never 0:
// the meta of a transaction's finish, or a value log key's length): no
// user meta, no expiry, and a key of one
// of the store's key spaces (three letters and a zero, keys.go) or, in a
// write-ahead log, the finish of a transaction.
func plausibleEntry(b []byte, vlog bool) bool {
	if len(b) < 16 || b[1] != 0 {
		return false
	}
	if !vlog {
		// meta bitFinTxn, userMeta 0, klen 19, vlen < 128, expiresAt 0.
		return b[0] == walBitFinTxn && b[2] == byte(len(txnKey)+8) && b[3] < 0x80 && b[4] == 0 && len(b) > 5+len(txnKey) && string(b[5:5+len(txnKey)]) == txnKey
	}
	if b[0]&^(1|walBitTxn|walBitFinTxn) != 0 || b[2] < 9 || b[2] >= 0x80 {
		return false
	}
	// The value length is a uvarint of up to five bytes, then expiresAt 0.
	p := 3
	for p < 8 && b[p]&0x80 != 0 {
		p++
	}
	p++
	if p+5 > len(b) || b[p] != 0 {
		return false
	}
	k := b[p+1:]
	return k[0] >= 'a' && k[0] <= 'z' && k[1] >= 'a' && k[1] <= 'z' && k[2] >= 'a' && k[2] <= 'z' && k[3] == 0
}

type walHead struct {
	meta       byte
	klen, vlen uint64
	key        int // the key's offset in the log
}

// version is the commit version of a decoded entry: Badger's keys end in
// math.MaxUint64 less the version, big-endian (y.KeyWithTs).
func (e walHead) version(b []byte) uint64 {
	if e.klen < 8 {
		return 0
	}
	end := e.key + int(e.klen)
	return math.MaxUint64 - binary.BigEndian.Uint64(b[end-8:end])
}

// walEntry decodes the entry at off; n is 0 when none reads there (a zero
// entry, a cut, a bad checksum).
func walEntry(b []byte, off int) (walHead, int) {
	var e walHead
	if off+2 > len(b) {
		return e, 0
	}
	e.meta = b[off]
	p := off + 2
	var k int
	if e.klen, k = binary.Uvarint(b[p:]); k <= 0 {
		return e, 0
	}
	p += k
	if e.vlen, k = binary.Uvarint(b[p:]); k <= 0 {
		return e, 0
	}
	p += k
	if _, k = binary.Uvarint(b[p:]); k <= 0 {
		return e, 0
	}
	p += k
	if e.klen == 0 || e.klen > 1<<16 || e.vlen > uint64(len(b)) {
		return e, 0
	}
	e.key = p
	end := p + int(e.klen) + int(e.vlen)
	if end+4 > len(b) || end < p {
		return e, 0
	}
	if crc32.Checksum(b[off:end], crcTable) != binary.BigEndian.Uint32(b[end:end+4]) {
		return e, 0
	}
	return e, end + 4 - off
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
