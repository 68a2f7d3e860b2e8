package recall

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	// done records that the index holds every vector up to the embedding
	// cursor (what a vector file's next commit vouches for).
	done(cursor uint64)
	// close saves what save would and lets go of the index's file; the
	// index is not used after it.
	close() error
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

func (c *chromemIndex) done(uint64)  {}
func (c *chromemIndex) close() error { return nil }

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
