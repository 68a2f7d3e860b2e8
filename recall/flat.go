package recall

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/google/uuid"
)

// flatIndex keeps every vector quantised to int8 (a scale per vector) and
// scans it on all cores: a quarter of float32's memory and, measured by
// `cyan bench recall`, several times faster than chromem-go's scan (which
// hands every document through a channel and takes a lock per candidate).
//
// The sign bits of every vector (the first pass) are on the heap. The
// codes and scales (the second pass) are on the heap when the index has
// no file; when it has one (vecfile.go) they are all in the file, and the
// heap keeps a copy of those of the first slots, up to heapMax bytes: a
// search reads the rest with a pread each. At a million 768-dimension
// vectors that is 96 MB of sign bits and heapMax of codes on the heap
// instead of 870 MB; at the built-in embedder's 100 dimensions the codes
// of the first few hundred thousand vectors are on the heap, so most
// searches read nothing. All give the same results: the sign bits are the
// codes' signs, and the codes are encodeVec's, as Badger keeps them.
type flatIndex struct {
	mu    sync.RWMutex
	dim   int
	words int      // uint64 words of sign bits per vector
	bits  []uint64 // sign bits, for the first pass
	docs  []uint32 // per slot, its document (deadSlot: no longer stored)
	dead  int      // slots of deadSlot
	chans []uint32 // per slot, the channel's number in chIdx
	chIdx map[string]uint32
	// The codes (dim per slot) and scales of the first len(scale) slots:
	// every slot's without a file, with one as many as fit heapMax.
	codes   []byte
	scale   []float32
	heapMax int // bytes of codes and scales kept on the heap
	// file holds the codes when path is set: made at the first vector, or
	// opened by the Index (openFlatFile).
	file *vecFile
	path string
	fp   [8]byte
}

// deadSlot is the document of a slot whose message is no longer stored.
const deadSlot = math.MaxUint32

// newFlatIndex makes an index that keeps its codes on the heap.
func newFlatIndex() *flatIndex { return &flatIndex{heapMax: math.MaxInt} }

// newFileFlatIndex makes an index that keeps its codes in a vector file at
// path, written for the embedder fp, made at the first vector, and a copy
// of the first of them on the heap, up to heapMax bytes (vecHeapMax).
func newFileFlatIndex(path string, fp [8]byte, heapMax int) *flatIndex {
	return &flatIndex{path: path, fp: fp, heapMax: heapMax}
}

// vecHeapMax is how many bytes of codes and scales an index with a vector
// file keeps on the heap: all of the built-in embedder's (100 dimensions,
// 104 bytes a vector) to about 320k messages, the first 320k of them
// beyond, so that a search's second pass makes no pread for them; at a
// million messages that is about 32 MiB of a steady resident memory of
// under 512 MiB (docs/benchmarks.md).
const vecHeapMax = 32 << 20

// reserveCodes makes room on the heap for the codes and scales of n
// slots of dim dimensions: exactly that much (append's growth could pass
// heapMax, and it clears what it reserves).
func (f *flatIndex) reserveCodes(n, dim int) {
	if n <= cap(f.scale) && n*dim <= cap(f.codes) {
		return
	}
	codes := make([]byte, len(f.codes), n*dim)
	copy(codes, f.codes)
	scale := make([]float32, len(f.scale), n)
	copy(scale, f.scale)
	f.codes, f.scale = codes, scale
}

// keepCodes copies a new slot's stored vector (a scale, then the codes)
// to the heap if every slot before it is there and it fits heapMax. The
// caller holds mu, before it adds the slot to docs.
func (f *flatIndex) keepCodes(stored []byte) {
	dim := len(stored) - 4
	if len(f.scale) != len(f.docs) || (len(f.scale)+1)*(dim+4) > f.heapMax {
		return
	}
	if len(f.codes)+dim > cap(f.codes) && f.heapMax != math.MaxInt {
		// Grow by doubling, but never past the budget.
		room := f.heapMax / (dim + 4)
		f.reserveCodes(min(room, max(2*len(f.scale), 1024)), dim)
	}
	f.codes = append(f.codes, stored[4:]...)
	f.scale = append(f.scale, math.Float32frombits(binary.LittleEndian.Uint32(stored)))
}

func quantize(v []float32, dst []int8) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 {
		return 0
	}
	s := 127 / m
	for i, x := range v {
		dst[i] = int8(math.Round(float64(x * s)))
	}
	return m / 127
}

func (f *flatIndex) add(doc uint32, id uuid.UUID, channel string, v []float32) error {
	return f.addStored(doc, id, channel, encodeVec(v))
}

// addStored adds a vector in its stored form (encodeVec: a float32 scale,
// then int8 codes) without decoding it: loading a million vectors is then
// a copy, not a round trip through float32.
func (f *flatIndex) addStored(doc uint32, id uuid.UUID, channel string, b []byte) error {
	if len(b) < 5 {
		return errors.New("recall: short stored vector")
	}
	dim := len(b) - 4
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dim == 0 {
		f.dim = dim
		f.words = (dim + 63) / 64
	}
	if dim != f.dim {
		return fmt.Errorf("recall: stored vector of %d dimensions in an index of %d", dim, f.dim)
	}
	switch {
	case f.path != "" && f.file == nil:
		file, err := createVecFile(f.path, f.fp, dim)
		if err != nil {
			return fmt.Errorf("%w: %w", errVecWrite, err)
		}
		f.file = file
		fallthrough
	case f.file != nil:
		if err := f.file.append(id, b); err != nil {
			return err
		}
	}
	f.keepCodes(b)
	f.bits = appendSignBits(f.bits, b[4:], f.words)
	f.docs = append(f.docs, doc)
	f.chans = append(f.chans, f.channel(channel))
	return nil
}

// addSlot adds the sign bits and document of the file's record slot as
// the file is opened (its stored vector, a scale and the codes, is there
// already; the heap keeps a copy as keepCodes says). The caller holds mu
// or owns f alone.
func (f *flatIndex) addSlot(doc uint32, channel string, stored []byte) {
	if doc == deadSlot {
		f.dead++
	}
	f.keepCodes(stored)
	f.bits = appendSignBits(f.bits, stored[4:], f.words)
	f.docs = append(f.docs, doc)
	f.chans = append(f.chans, f.channel(channel))
}

// channel numbers a channel name. The caller holds mu.
func (f *flatIndex) channel(name string) uint32 {
	if f.chIdx == nil {
		f.chIdx = map[string]uint32{}
	}
	ch, ok := f.chIdx[name]
	if !ok {
		ch = uint32(len(f.chIdx))
		f.chIdx[name] = ch
	}
	return ch
}

func (f *flatIndex) count() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.docs) - f.dead
}

// done records that the index holds every vector up to the embedding
// cursor; the file's next commit vouches for it.
func (f *flatIndex) done(cursor uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.file != nil {
		f.file.cursor = cursor
	}
}

// save commits the vector file (the path is the file's own); without one
// there is nothing to save: the index loads from the embeddings in Badger.
func (f *flatIndex) save(string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.file == nil {
		return nil
	}
	return f.file.commit()
}

func (f *flatIndex) load(string) error {
	return errors.New("recall: the flat index is opened by the index (openFlatFile)")
}

// settle commits the index's file and moves it to path, where the index
// keeps it from then on (a rebuilt file takes the place of the old one).
func (f *flatIndex) settle(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.file != nil {
		if err := f.file.commit(); err != nil {
			return err
		}
		if err := f.file.rename(path); err != nil {
			return err
		}
	}
	f.path = path
	return nil
}

// close commits and closes the vector file; searches after it find
// nothing.
func (f *flatIndex) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.file == nil {
		return nil
	}
	err := f.file.commit()
	if cerr := f.file.close(); err == nil {
		err = cerr
	}
	f.file, f.path = nil, ""
	f.bits, f.docs, f.chans, f.dead = nil, nil, nil, 0
	f.codes, f.scale = nil, nil
	return err
}

// search scans in two passes: the sign bits of every vector (a popcount
// per 64 dimensions) pick a shortlist, and the int8 codes rank it exactly.
// Measured at 100k vectors (cyan bench recall), the first pass costs a
// tenth of an int8 scan and the shortlist keeps the exact top results.
func (f *flatIndex) search(ctx context.Context, q []float32, n int, channels []string, keep func(uint32) bool) ([]vecHit, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	total := len(f.docs)
	if total == 0 || n <= 0 {
		return nil, nil
	}
	dim, words := f.dim, f.words
	qq := make([]int8, dim)
	qs := quantize(q[:min(len(q), dim)], qq)
	qb := signBits(q[:min(len(q), dim)], words)
	var chanSet []bool // by channel number; nil: every channel
	if len(channels) > 0 {
		chanSet = make([]bool, len(f.chIdx))
		for _, c := range channels {
			if ch, ok := f.chIdx[c]; ok {
				chanSet[ch] = true
			}
		}
	}
	short := max(8*n, 512)
	if short >= total {
		short = total
	}
	workers := min(runtime.GOMAXPROCS(0), max(1, total/16384))
	parts := make([][]vecHit, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*total/workers, (w+1)*total/workers
		wg.Go(func() {
			h := newTopK(short)
			thr := -1 // a slot must share more sign bits than this to enter
			bitsArr := f.bits
			for i := lo; i < hi; i++ {
				if chanSet != nil && !chanSet[f.chans[i]] {
					continue
				}
				var diff int
				switch words {
				case 4: // 256 dimensions, HashEmbedder
					b := bitsArr[i*4 : i*4+4 : i*4+4]
					diff = bits.OnesCount64(b[0]^qb[0]) + bits.OnesCount64(b[1]^qb[1]) +
						bits.OnesCount64(b[2]^qb[2]) + bits.OnesCount64(b[3]^qb[3])
				case 12: // 768 dimensions, the common model size
					b := bitsArr[i*12 : i*12+12 : i*12+12]
					q := qb[:12:12]
					diff = bits.OnesCount64(b[0]^q[0]) + bits.OnesCount64(b[1]^q[1]) +
						bits.OnesCount64(b[2]^q[2]) + bits.OnesCount64(b[3]^q[3]) +
						bits.OnesCount64(b[4]^q[4]) + bits.OnesCount64(b[5]^q[5]) +
						bits.OnesCount64(b[6]^q[6]) + bits.OnesCount64(b[7]^q[7]) +
						bits.OnesCount64(b[8]^q[8]) + bits.OnesCount64(b[9]^q[9]) +
						bits.OnesCount64(b[10]^q[10]) + bits.OnesCount64(b[11]^q[11])
				default:
					for k, x := range bitsArr[i*words : i*words+words] {
						diff += bits.OnesCount64(x ^ qb[k])
					}
				}
				same := 64*words - diff
				if same <= thr {
					continue
				}
				if d := f.docs[i]; d == deadSlot || keep != nil && !keep(d) {
					continue
				}
				h.push(vecHit{doc: uint32(i), sim: float32(same)}) // doc holds the slot here
				if h.full() {
					thr = int(h.min())
				}
			}
			// Second pass: exact int8 scores of the shortlist, its codes
			// from the heap, or read from the file past the heap's.
			out := newTopK(n)
			var rec []byte
			onHeap := len(f.scale)
			for _, c := range h.items {
				i := int(c.doc)
				var code []byte
				var scale float32
				if i >= onHeap {
					if rec == nil {
						rec = make([]byte, 4+dim)
					}
					if err := f.file.read(i, rec); err != nil {
						errs[w] = fmt.Errorf("recall: read vector file: %w", err)
						return
					}
					scale, code = math.Float32frombits(binary.LittleEndian.Uint32(rec)), rec[4:]
				} else {
					scale, code = f.scale[i], f.codes[i*dim:i*dim+dim]
				}
				sim := float32(dotCodes(code, qq)) * scale * qs
				if !out.full() || sim > out.min() {
					out.push(vecHit{doc: f.docs[i], sim: sim})
				}
			}
			parts[w] = out.items
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var all []vecHit
	for _, p := range parts {
		all = append(all, p...)
	}
	sortHits(all)
	if len(all) > n {
		all = all[:n]
	}
	return all, nil
}

// dotCodes is the dot product of stored codes (int8 as bytes) and a
// quantised query.
func dotCodes(code []byte, qq []int8) int32 {
	dim := len(qq)
	code = code[:dim]
	var s int32
	j := 0
	for ; j+8 <= dim; j += 8 {
		s += int32(int8(code[j]))*int32(qq[j]) + int32(int8(code[j+1]))*int32(qq[j+1]) +
			int32(int8(code[j+2]))*int32(qq[j+2]) + int32(int8(code[j+3]))*int32(qq[j+3]) +
			int32(int8(code[j+4]))*int32(qq[j+4]) + int32(int8(code[j+5]))*int32(qq[j+5]) +
			int32(int8(code[j+6]))*int32(qq[j+6]) + int32(int8(code[j+7]))*int32(qq[j+7])
	}
	for ; j < dim; j++ {
		s += int32(int8(code[j])) * int32(qq[j])
	}
	return s
}

// signBits packs the signs of v, one bit a dimension.
func signBits(v []float32, words int) []uint64 {
	b := make([]uint64, words)
	for i, x := range v {
		if x > 0 {
			b[i/64] |= 1 << (i % 64)
		}
	}
	return b
}

// appendSignBits appends the sign bits of stored codes (int8 as bytes),
// one bit a dimension, set where the code is above zero, eight codes at a
// time: opening a million vectors computes them all.
func appendSignBits(dst []uint64, codes []byte, words int) []uint64 {
	const hi, lo = 0x8080808080808080, 0x0101010101010101
	n := len(dst)
	dst = slices.Grow(dst, words)[:n+words]
	w := dst[n:]
	clear(w)
	i := 0
	for ; i+8 <= len(codes); i += 8 {
		x := binary.LittleEndian.Uint64(codes[i:])
		// A byte's top bit: set when it is 1…127 (not zero, not negative).
		m := ((x | hi) - lo) &^ x & hi
		w[i/64] |= (((m >> 7) * 0x0102040810204080) >> 56) << (i % 64)
	}
	for ; i < len(codes); i++ {
		if int8(codes[i]) > 0 {
			w[i/64] |= 1 << (i % 64)
		}
	}
	return dst
}
