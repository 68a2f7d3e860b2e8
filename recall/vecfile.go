package recall

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"syscall"

	"github.com/google/uuid"
)

// The vector file keeps the flat index's codes on disk (in
// Options.CacheDir, one file per embedder), so a million 768-dimension
// vectors cost the heap their sign bits and a copy of the codes of the
// first of them (vecHeapMax): the second pass of a search reads the codes
// it ranks past those with pread, through the page cache.
// The pages it reads stay the kernel's to keep or drop; mapping the file
// instead would count every page a search ever touched as the daemon's
// resident memory, and after a few hundred queries that is the whole file.
//
// It is written as the vectors are made (appended, then made durable by a
// header, every Options.SaveEvery and on a clean stop) and opened, not
// rebuilt, at start. Like the lexical snapshot it is a cache of what
// Badger holds: a missing, torn (a checksum), foreign (another version or
// embedder) or stale (its cursor or count past the store's, its last
// vector not the stored one) file is thrown away and rebuilt from the
// embeddings in Badger, recall answering by words meanwhile.
//
// Layout (little-endian): two header slots of vecHeaderSize bytes, then
// the records, each a message id (16 bytes), a float32 scale and dims int8
// codes (encodeVec's form behind the id). A header holds the magic, the
// version, dims, a commit number, the count of records it vouches for,
// the embedding cursor those records are complete to, the embedder's
// fingerprint, a CRC-32 of those records and a CRC-32 of itself. Commits
// alternate between the slots and the newer valid one is used, so a header
// torn in its write leaves the one before it; records past the header's
// count (written after the last commit) are cut off at open and made again
// from Badger.
const (
	vecFileMagic   = "cyanvec\x00"
	vecFileVersion = 1
	vecHeaderSize  = 64
	vecRecordsAt   = 2 * vecHeaderSize
	// maxVecDims bounds the dimension a header may claim.
	maxVecDims = 1 << 16
)

// errVecFile marks a vector file that cannot be used, errVecWrite one
// that cannot be made.
var (
	errVecFile  = errors.New("recall: vector file")
	errVecWrite = errors.New("recall: the vector file cannot be made")
)

// vecHeader is one header slot.
type vecHeader struct {
	dims   int
	seq    uint64 // commit number
	count  uint64 // records vouched for
	cursor uint64 // the embedding cursor the records are complete to
	fp     [8]byte
	crc    uint32 // CRC-32 of the records
}

func (h vecHeader) encode() []byte {
	b := make([]byte, vecHeaderSize)
	copy(b, vecFileMagic)
	binary.LittleEndian.PutUint32(b[8:], vecFileVersion)
	binary.LittleEndian.PutUint32(b[12:], uint32(h.dims))
	binary.LittleEndian.PutUint64(b[16:], h.seq)
	binary.LittleEndian.PutUint64(b[24:], h.count)
	binary.LittleEndian.PutUint64(b[32:], h.cursor)
	copy(b[40:48], h.fp[:])
	binary.LittleEndian.PutUint32(b[48:], h.crc)
	binary.LittleEndian.PutUint32(b[60:], crc32.ChecksumIEEE(b[:60]))
	return b
}

// parseVecHeader reads one header slot. It checks the slot alone; whether
// its records are there and whole is the opener's to check.
func parseVecHeader(b []byte) (vecHeader, error) {
	var h vecHeader
	if len(b) < vecHeaderSize || string(b[:8]) != vecFileMagic {
		return h, fmt.Errorf("%w: not a vector file", errVecFile)
	}
	if crc32.ChecksumIEEE(b[:60]) != binary.LittleEndian.Uint32(b[60:]) {
		return h, fmt.Errorf("%w: torn header (checksum)", errVecFile)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != vecFileVersion {
		return h, fmt.Errorf("%w: version %d, not %d", errVecFile, v, vecFileVersion)
	}
	h.dims = int(binary.LittleEndian.Uint32(b[12:]))
	h.seq = binary.LittleEndian.Uint64(b[16:])
	h.count = binary.LittleEndian.Uint64(b[24:])
	h.cursor = binary.LittleEndian.Uint64(b[32:])
	copy(h.fp[:], b[40:48])
	h.crc = binary.LittleEndian.Uint32(b[48:])
	if h.dims <= 0 || h.dims > maxVecDims {
		return h, fmt.Errorf("%w: %d dimensions", errVecFile, h.dims)
	}
	return h, nil
}

// newestHeader picks the newer valid slot of the two at the file's start.
func newestHeader(b []byte) (vecHeader, error) {
	if len(b) < vecRecordsAt {
		return vecHeader{}, fmt.Errorf("%w: %d bytes, shorter than its headers", errVecFile, len(b))
	}
	a, errA := parseVecHeader(b[:vecHeaderSize])
	c, errC := parseVecHeader(b[vecHeaderSize:vecRecordsAt])
	switch {
	case errA == nil && (errC != nil || a.seq >= c.seq):
		return a, nil
	case errC == nil:
		return c, nil
	}
	return vecHeader{}, errA
}

// vecFile is the open vector file. Its owner (a flatIndex) serialises
// writes against reads; reads may run concurrently with each other.
type vecFile struct {
	f      *os.File
	fd     int // f's descriptor, for read
	path   string
	fp     [8]byte
	dims   int
	rec    int    // bytes per record
	n      int    // records, written and buffered
	synced int    // records written to the file; the rest are in buf
	buf    []byte // records synced..n
	crc    uint32 // CRC-32 of records 0..n
	cursor uint64 // the embedding cursor records 0..n are complete to
	// last is the header of the last commit.
	last vecHeader
}

// vecWriteBuffer is how many bytes of new records are gathered before
// they are written.
const vecWriteBuffer = 1 << 20

func vecRecordSize(dims int) int { return 16 + 4 + dims }

// createVecFile makes an empty vector file at path (replacing one there)
// and commits its header.
func createVecFile(path string, fp [8]byte, dims int) (*vecFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("recall: create vector file: %w", err)
	}
	v := &vecFile{f: f, fd: int(f.Fd()), path: path, fp: fp, dims: dims, rec: vecRecordSize(dims)}
	// Both slots empty, then the first commit's header.
	if _, err := f.WriteAt(make([]byte, vecRecordsAt), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("recall: create vector file: %w", err)
	}
	if err := v.commit(); err != nil {
		f.Close()
		return nil, err
	}
	return v, nil
}

// openVecFile opens the vector file at path written for the embedder fp
// and checks its header; scan then reads its records. A file that cannot
// be used gives an error wrapping errVecFile (or os.ErrNotExist).
func openVecFile(path string, fp [8]byte) (*vecFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	v, err := checkVecFile(f, path, fp)
	if err != nil {
		f.Close()
		return nil, err
	}
	return v, nil
}

func checkVecFile(f *os.File, path string, fp [8]byte) (*vecFile, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	head := make([]byte, vecRecordsAt)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, fmt.Errorf("%w: %d bytes, shorter than its headers", errVecFile, st.Size())
	}
	h, err := newestHeader(head)
	if err != nil {
		return nil, err
	}
	if h.fp != fp {
		return nil, fmt.Errorf("%w: written for another embedder", errVecFile)
	}
	rec := vecRecordSize(h.dims)
	if room := uint64(st.Size()-vecRecordsAt) / uint64(rec); h.count > room {
		return nil, fmt.Errorf("%w: torn (%d records vouched for, %d there)", errVecFile, h.count, room)
	}
	return &vecFile{f: f, fd: int(f.Fd()), path: path, fp: fp, dims: h.dims, rec: rec, n: int(h.count), synced: int(h.count), cursor: h.cursor, last: h}, nil
}

// scan reads every record the header vouches for, in order, handing each
// (its slot, message id and stored vector: scale and codes) to each, and
// checks them against the header's checksum; then it cuts off what was
// written after the last commit. A mismatch is an error wrapping
// errVecFile, after each has seen the records.
func (v *vecFile) scan(each func(slot int, id uuid.UUID, stored []byte)) error {
	// Large sequential reads; the page cache keeps as many of the pages
	// as it likes, none of them mapped into the process.
	rec := v.rec
	chunk := make([]byte, max(1, (4<<20)/rec)*rec)
	crc := uint32(0)
	for slot, off := 0, int64(vecRecordsAt); slot < v.n; {
		k := min(v.n-slot, len(chunk)/rec)
		b := chunk[:k*rec]
		if _, err := v.f.ReadAt(b, off); err != nil {
			return fmt.Errorf("%w: %v", errVecFile, err)
		}
		crc = crc32.Update(crc, crc32.IEEETable, b)
		for i := range k {
			r := b[i*rec : (i+1)*rec]
			each(slot+i, uuid.UUID(r[:16]), r[16:])
		}
		slot += k
		off += int64(len(b))
	}
	if crc != v.last.crc {
		return fmt.Errorf("%w: torn (records' checksum)", errVecFile)
	}
	v.crc = crc
	st, err := v.f.Stat()
	if err != nil {
		return err
	}
	if end := int64(vecRecordsAt) + int64(v.n)*int64(rec); st.Size() > end {
		if err := v.f.Truncate(end); err != nil {
			return fmt.Errorf("recall: vector file: cut off its unsaved tail: %w", err)
		}
	}
	return nil
}

// append adds a record (stored: scale and codes, encodeVec's form).
func (v *vecFile) append(id uuid.UUID, stored []byte) error {
	if len(stored) != 4+v.dims {
		return fmt.Errorf("recall: a vector of %d dimensions in a file of %d", len(stored)-4, v.dims)
	}
	start := len(v.buf)
	v.buf = append(v.buf, id[:]...)
	v.buf = append(v.buf, stored...)
	v.crc = crc32.Update(v.crc, crc32.IEEETable, v.buf[start:])
	v.n++
	if len(v.buf) >= vecWriteBuffer {
		// A failed write keeps the records buffered; the next flush
		// writes them, and commit reports the failure.
		_ = v.flush()
	}
	return nil
}

// flush writes the buffered records.
func (v *vecFile) flush() error {
	if len(v.buf) == 0 {
		return nil
	}
	off := int64(vecRecordsAt) + int64(v.synced)*int64(v.rec)
	if _, err := v.f.WriteAt(v.buf, off); err != nil {
		return fmt.Errorf("recall: write vector file: %w", err)
	}
	v.synced = v.n
	v.buf = v.buf[:0]
	return nil
}

// read puts record slot's stored vector (scale and codes) into dst, which
// holds 4+dims bytes.
func (v *vecFile) read(slot int, dst []byte) error {
	if slot >= v.synced {
		off := (slot-v.synced)*v.rec + 16
		copy(dst, v.buf[off:off+4+v.dims])
		return nil
	}
	off := int64(vecRecordsAt) + int64(slot)*int64(v.rec) + 16
	b := dst[:4+v.dims]
	for len(b) > 0 {
		// The raw pread: a search makes a thousand or two of them, and
		// os.File's own bookkeeping costs a third again; the owner's lock
		// keeps the file open meanwhile.
		k, err := syscall.Pread(v.fd, b, off)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return err
		case k == 0:
			return io.ErrUnexpectedEOF
		}
		b, off = b[k:], off+int64(k)
	}
	return nil
}

// commit makes the records durable and then a header that vouches for
// them, in the slot the last commit did not use. It does nothing when
// nothing changed.
func (v *vecFile) commit() error {
	if v.last.seq > 0 && uint64(v.n) == v.last.count && v.cursor == v.last.cursor {
		return nil
	}
	if err := v.flush(); err != nil {
		return err
	}
	if err := v.f.Sync(); err != nil {
		return fmt.Errorf("recall: sync vector file: %w", err)
	}
	h := vecHeader{dims: v.dims, seq: v.last.seq + 1, count: uint64(v.n), cursor: v.cursor, fp: v.fp, crc: v.crc}
	if _, err := v.f.WriteAt(h.encode(), int64(h.seq%2)*vecHeaderSize); err != nil {
		return fmt.Errorf("recall: write vector file header: %w", err)
	}
	if err := v.f.Sync(); err != nil {
		return fmt.Errorf("recall: sync vector file: %w", err)
	}
	v.last = h
	return nil
}

// rename moves the file to path (a rebuilt file takes the place of the
// one it replaces).
func (v *vecFile) rename(path string) error {
	if err := os.Rename(v.path, path); err != nil {
		return fmt.Errorf("recall: vector file: %w", err)
	}
	v.path = path
	return nil
}

func (v *vecFile) close() error { return v.f.Close() }
