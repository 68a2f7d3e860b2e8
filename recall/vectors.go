package recall

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/google/uuid"
	chromem "github.com/philippgille/chromem-go"
)

// vecHit is a document found by the vector index with its cosine.
type vecHit struct {
	doc uint32
	sim float32
}

// vectorIndex holds the embeddings for search. Implementations are safe
// for concurrent use.
type vectorIndex interface {
	// add puts a document's normalised vector (channel is its shard).
	add(doc uint32, id uuid.UUID, channel string, v []float32) error
	// search returns the n nearest documents that keep accepts, best first.
	search(ctx context.Context, q []float32, n int, channels []string, keep func(uint32) bool) ([]vecHit, error)
	count() int
	// save writes the index to path atomically (a no-op for indexes that
	// rebuild from the store as fast as they would load).
	save(path string) error
	// load reads an index saved by save.
	load(path string) error
}

// Vector index kinds (config embed.index).
const (
	IndexFlat    = "flat"
	IndexChromem = "chromem"
)

// chromemIndex keeps one chromem-go collection per channel (so the channel
// filter picks shards instead of scanning) in an in-memory chromem DB. Its
// file is a cache: written whole to a temporary file and renamed, and
// thrown away and rebuilt from the embeddings in Badger when it is
// missing, unreadable or holds a different count (chromem's own
// per-document persistence is not atomic, and one torn file stops the whole
// DB from opening).
type chromemIndex struct {
	// resolve maps a message id to its document number in this run.
	resolve func(uuid.UUID) (uint32, bool)
	mu      sync.RWMutex
	db      *chromem.DB
	col     map[string]*chromem.Collection
	n       int
}

func newChromemIndex(resolve func(uuid.UUID) (uint32, bool)) *chromemIndex {
	return &chromemIndex{resolve: resolve, db: chromem.NewDB(), col: map[string]*chromem.Collection{}}
}

// noEmbed is the collections' embedding function: vectors are always given.
func noEmbed(context.Context, string) ([]float32, error) {
	return nil, errors.New("recall: chromem must not embed; vectors are made by the recall embedder")
}

const chromemPrefix = "ch:"

func (c *chromemIndex) collection(channel string) (*chromem.Collection, error) {
	c.mu.RLock()
	col := c.col[channel]
	c.mu.RUnlock()
	if col != nil {
		return col, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if col = c.col[channel]; col != nil {
		return col, nil
	}
	col, err := c.db.GetOrCreateCollection(chromemPrefix+channel, nil, noEmbed)
	if err != nil {
		return nil, err
	}
	c.col[channel] = col
	return col, nil
}

func (c *chromemIndex) add(_ uint32, id uuid.UUID, channel string, v []float32) error {
	col, err := c.collection(channel)
	if err != nil {
		return err
	}
	if err := col.AddDocument(context.Background(), chromem.Document{ID: id.String(), Embedding: v}); err != nil {
		return err
	}
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return nil
}

func (c *chromemIndex) count() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.n
}

func (c *chromemIndex) search(ctx context.Context, q []float32, n int, channels []string, keep func(uint32) bool) ([]vecHit, error) {
	c.mu.RLock()
	var cols []*chromem.Collection
	if len(channels) == 0 {
		for _, col := range c.col {
			cols = append(cols, col)
		}
	} else {
		for _, ch := range channels {
			if col := c.col[ch]; col != nil {
				cols = append(cols, col)
			}
		}
	}
	c.mu.RUnlock()
	var hits []vecHit
	for _, col := range cols {
		total := col.Count()
		want := n
		if keep != nil {
			want = n * 4 // room for the date filter
		}
		for {
			k := min(want, total)
			if k == 0 {
				break
			}
			res, err := col.QueryEmbedding(ctx, q, k, nil, nil)
			if err != nil {
				return nil, err
			}
			var found []vecHit
			for _, r := range res {
				id, err := uuid.Parse(r.ID)
				if err != nil {
					continue
				}
				d, ok := c.resolve(id)
				if ok && (keep == nil || keep(d)) {
					found = append(found, vecHit{doc: d, sim: r.Similarity})
				}
			}
			if len(found) >= min(n, total) || k == total {
				hits = append(hits, found...)
				break
			}
			want *= 4
		}
	}
	sortHits(hits)
	if len(hits) > n {
		hits = hits[:n]
	}
	return hits, nil
}

func sortHits(h []vecHit) {
	slices.SortFunc(h, func(a, b vecHit) int {
		switch {
		case a.sim > b.sim:
			return -1
		case a.sim < b.sim:
			return 1
		}
		return int(a.doc) - int(b.doc)
	})
}

func (c *chromemIndex) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := c.db.ExportToFile(tmp, true, ""); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("recall: write vector cache: %w", err)
	}
	f, err := os.Open(tmp)
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("recall: write vector cache: %w", err)
	}
	return nil
}

func (c *chromemIndex) load(path string) (err error) {
	defer func() {
		// A torn gob can make the decoder panic; that is a corrupt cache.
		if v := recover(); v != nil {
			err = fmt.Errorf("recall: vector cache %s is corrupt: %v", path, v)
		}
	}()
	db := chromem.NewDB()
	if err := db.ImportFromFile(path, ""); err != nil {
		return fmt.Errorf("recall: vector cache %s: %w", path, err)
	}
	cols := map[string]*chromem.Collection{}
	n := 0
	for name := range db.ListCollections() {
		ch, ok := cutPrefix(name, chromemPrefix)
		if !ok {
			continue
		}
		col := db.GetCollection(name, noEmbed)
		cols[ch] = col
		n += col.Count()
	}
	c.mu.Lock()
	c.db, c.col, c.n = db, cols, n
	c.mu.Unlock()
	return nil
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}

// flatIndex keeps every vector quantised to int8 (a scale per vector) in
// one contiguous array and scans it on all cores: a quarter of float32's
// memory and, measured by `cyan bench recall`, several times faster than
// chromem-go's scan (which hands every document through a channel and takes
// a lock per candidate). It loads from the embeddings in Badger, which is
// as fast as reading a cache file, so it keeps no file of its own.
type flatIndex struct {
	mu    sync.RWMutex
	dim   int
	words int      // uint64 words of sign bits per vector
	bits  []uint64 // sign bits, for the first pass
	codes []int8
	scale []float32
	docs  []uint32
	chans []uint32 // per slot, the channel's number in chIdx
	chIdx map[string]uint32
}

func newFlatIndex() *flatIndex { return &flatIndex{} }

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

func (f *flatIndex) add(doc uint32, _ uuid.UUID, channel string, v []float32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dim == 0 {
		f.dim = len(v)
		f.words = (len(v) + 63) / 64
	}
	if len(v) != f.dim {
		return fmt.Errorf("recall: vector of %d dimensions in an index of %d", len(v), f.dim)
	}
	n := len(f.codes)
	f.codes = slices.Grow(f.codes, f.dim)[:n+f.dim]
	f.scale = append(f.scale, quantize(v, f.codes[n:]))
	f.bits = append(f.bits, signBits(v, f.words)...)
	f.docs = append(f.docs, doc)
	f.chans = append(f.chans, f.channel(channel))
	return nil
}

// addStored adds a vector in its stored form (encodeVec: a float32 scale,
// then int8 codes) without decoding it: loading a million vectors is then
// a copy, not a round trip through float32.
func (f *flatIndex) addStored(doc uint32, channel string, b []byte) error {
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
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
	n := len(f.codes)
	f.codes = slices.Grow(f.codes, dim)[:n+dim]
	codes := f.codes[n:]
	words := make([]uint64, f.words)
	for i, c := range b[4:] {
		codes[i] = int8(c)
		if int8(c) > 0 {
			words[i/64] |= 1 << (i % 64)
		}
	}
	f.scale = append(f.scale, scale)
	f.bits = append(f.bits, words...)
	f.docs = append(f.docs, doc)
	f.chans = append(f.chans, f.channel(channel))
	return nil
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
	return len(f.docs)
}

func (f *flatIndex) save(string) error { return nil }
func (f *flatIndex) load(string) error { return errors.New("recall: the flat index keeps no file") }

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
				if words == 4 {
					b := bitsArr[i*4 : i*4+4 : i*4+4]
					diff = bits.OnesCount64(b[0]^qb[0]) + bits.OnesCount64(b[1]^qb[1]) +
						bits.OnesCount64(b[2]^qb[2]) + bits.OnesCount64(b[3]^qb[3])
				} else {
					for k, x := range bitsArr[i*words : i*words+words] {
						diff += bits.OnesCount64(x ^ qb[k])
					}
				}
				same := 64*words - diff
				if same <= thr {
					continue
				}
				if keep != nil && !keep(f.docs[i]) {
					continue
				}
				h.push(vecHit{doc: uint32(i), sim: float32(same)}) // doc holds the slot here
				if h.full() {
					thr = int(h.min())
				}
			}
			// Second pass: exact int8 scores of the shortlist.
			out := newTopK(n)
			for _, c := range h.items {
				i := int(c.doc)
				code := f.codes[i*dim : i*dim+dim]
				var s int32
				j := 0
				for ; j+8 <= dim; j += 8 {
					s += int32(code[j])*int32(qq[j]) + int32(code[j+1])*int32(qq[j+1]) +
						int32(code[j+2])*int32(qq[j+2]) + int32(code[j+3])*int32(qq[j+3]) +
						int32(code[j+4])*int32(qq[j+4]) + int32(code[j+5])*int32(qq[j+5]) +
						int32(code[j+6])*int32(qq[j+6]) + int32(code[j+7])*int32(qq[j+7])
				}
				for ; j < dim; j++ {
					s += int32(code[j]) * int32(qq[j])
				}
				sim := float32(s) * f.scale[i] * qs
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

// topK is a bounded min-heap of hits.
type topK struct {
	n     int
	items []vecHit
}

func newTopK(n int) *topK { return &topK{n: n, items: make([]vecHit, 0, n)} }

func (t *topK) full() bool         { return len(t.items) >= t.n }
func (t *topK) min() float32       { return t.items[0].sim }
func (t *topK) less(i, j int) bool { return t.items[i].sim < t.items[j].sim }

func (t *topK) push(x vecHit) {
	h := t.items
	if len(h) < t.n {
		h = append(h, x)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if h[p].sim <= h[i].sim {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		t.items = h
		return
	}
	h[0] = x
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h[l].sim < h[m].sim {
			m = l
		}
		if r < len(h) && h[r].sim < h[m].sim {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
