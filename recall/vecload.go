package recall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	"github.com/cyan-agent/cyan/store"
)

// vecFilePath is the flat index's vector file of this embedder ("": the
// index keeps no files).
func (x *Index) vecFilePath() string {
	if x.o.CacheDir == "" {
		return ""
	}
	return filepath.Join(x.o.CacheDir, fmt.Sprintf("vectors-%x.vec", x.fp))
}

// vecTail is how far (in arrivals) a vector file may be behind the
// store's embeddings and still be caught up message by message; further
// behind, it is rebuilt from the embeddings in one pass instead.
const vecTail = 4096

// loadFlatFile opens the flat index from its vector file and adds the
// embeddings Badger kept after the file's last commit; a missing,
// unusable or far-behind file is rebuilt from the embeddings in Badger
// (written beside it and renamed over it once complete). Until it
// returns, recall answers by words. The caller holds embMu; cursor and
// count are the store's embedding state.
func (x *Index) loadFlatFile(ctx context.Context, cursor, count uint64) error {
	if err := os.MkdirAll(x.o.CacheDir, 0o700); err != nil {
		return x.loadFlatHeap(ctx, cursor, count, err)
	}
	path := x.vecFilePath()
	_ = os.Remove(path + ".tmp") // a rebuild a crash cut short
	idx, err := x.openFlatFile(path, cursor, count)
	if err == nil {
		behind := cursor - idx.file.cursor
		if behind <= vecTail || behind <= idx.file.cursor/4 {
			added, err := x.catchUpFile(ctx, idx, idx.file.cursor, cursor)
			if err != nil {
				idx.close()
				return err
			}
			if err := idx.save(""); err != nil {
				x.log.Warn("the vector file was not saved; the next start catches it up again", "err", err)
			}
			x.log.Info("vector index opened from its file", "vectors", idx.count(), "caught_up", added)
			x.vecs.Store(&vectorHolder{idx: idx})
			x.vecReady.Store(true)
			return nil
		}
		x.log.Info("the vector file is far behind the stored embeddings; rebuilding it", "file", idx.file.cursor, "store", cursor)
		idx.close()
	}
	switch {
	case err == nil:
	case errors.Is(err, os.ErrNotExist):
		if count > 0 {
			x.log.Info("no vector file; building it from the stored embeddings", "vectors", count)
		}
	default:
		x.log.Warn("the vector file does not fit the store; rebuilding it from the stored embeddings", "err", err)
	}
	_ = os.Remove(path)
	idx = newFileFlatIndex(path+".tmp", x.fp, x.vecHeap)
	n, err := x.fillFromStore(ctx, idx, cursor)
	if err == nil {
		idx.done(cursor)
		err = idx.settle(path)
	}
	if err != nil {
		idx.close()
		_ = os.Remove(path + ".tmp")
		if ctx.Err() != nil {
			return err
		}
		return x.loadFlatHeap(ctx, cursor, count, err)
	}
	x.holdVectors(idx, n, count)
	return nil
}

// loadFlatHeap fills a flat index that keeps its codes on the heap, as
// one without a CacheDir does, when the vector file cannot be written
// (cause): a full or read-only disk costs memory, not the vectors. The
// next start tries the file again.
func (x *Index) loadFlatHeap(ctx context.Context, cursor, count uint64, cause error) error {
	x.log.Warn("the vector file cannot be written; keeping the vectors in memory until the next start", "err", cause)
	idx := newFlatIndex()
	n, err := x.fillFromStore(ctx, idx, cursor)
	if err != nil {
		return err
	}
	x.holdVectors(idx, n, count)
	return nil
}

// openFlatFile opens the vector file at path into a flat index, after
// checking that it fits the store's embeddings: its cursor and count not
// past the store's (cursor, count), its last vector the one Badger keeps
// for that message (so also of the same dimension). A record whose
// message is no longer indexed is a dead slot.
func (x *Index) openFlatFile(path string, cursor, count uint64) (*flatIndex, error) {
	file, err := openVecFile(path, x.fp)
	if err != nil {
		return nil, err
	}
	idx := newFileFlatIndex(path, x.fp, x.vecHeap)
	fail := func(err error) (*flatIndex, error) {
		file.close()
		return nil, err
	}
	if file.cursor > cursor || uint64(file.n) > count {
		return fail(fmt.Errorf("%w: stale (%d vectors to %d, the store has %d to %d)", errVecFile, file.n, file.cursor, count, cursor))
	}
	idx.dim, idx.words = file.dims, (file.dims+63)/64
	idx.bits = make([]uint64, 0, file.n*idx.words)
	idx.docs = make([]uint32, 0, file.n)
	idx.chans = make([]uint32, 0, file.n)
	idx.reserveCodes(min(file.n, idx.heapMax/(file.dims+4)), file.dims)
	var lastID uuid.UUID
	var last []byte
	c := x.c
	c.mu.RLock()
	err = file.scan(func(slot int, id uuid.UUID, stored []byte) {
		if slot%4096 == 4095 { // let the lexical index write
			c.mu.RUnlock()
			c.mu.RLock()
		}
		doc, ok := c.byID.get(c.docs, id)
		ch := ""
		if ok {
			ch = c.chans[c.docs[doc].ch]
		} else {
			doc = deadSlot
		}
		idx.addSlot(doc, ch, stored)
		if slot == file.n-1 {
			lastID, last = id, bytes.Clone(stored)
		}
	})
	c.mu.RUnlock()
	if err != nil {
		return fail(err)
	}
	if file.n > 0 && !x.keepsVectors() {
		// Nothing kept to compare with: the last message's vector, made
		// again from its text.
		var kept []byte
		m, err := x.st.Get(lastID.String())
		if err == nil {
			var vs [][]float32
			if vs, err = x.emb.Embed(context.Background(), []string{indexText(m)}); err == nil {
				kept = encodeVec(vs[0])
			}
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			return fail(fmt.Errorf("%w: stale (its last message is not in the store)", errVecFile))
		case err != nil:
			return fail(err)
		case !bytes.Equal(kept, last):
			return fail(fmt.Errorf("%w: stale (its last vector is not the one its message's text makes)", errVecFile))
		}
	} else if file.n > 0 {
		var kept []byte
		err := x.st.DB().View(func(txn *badger.Txn) error {
			it, err := txn.Get(x.vecKey(lastID))
			if err != nil {
				return err
			}
			kept, err = it.ValueCopy(nil)
			return err
		})
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
			return fail(fmt.Errorf("%w: stale (its last vector is not in the store)", errVecFile))
		case err != nil:
			return fail(err)
		case len(kept) != len(last):
			return fail(fmt.Errorf("%w: stale (%d dimensions, the store's vectors have %d)", errVecFile, file.dims, len(kept)-4))
		case !bytes.Equal(kept, last):
			return fail(fmt.Errorf("%w: stale (its last vector is not the stored one)", errVecFile))
		}
	}
	idx.file = file
	return idx, nil
}

// catchUpFile adds to idx the embeddings Badger keeps for the messages
// that arrived after from, up to the store's embedding cursor to (those
// written after the file's last commit), and returns how many it added.
func (x *Index) catchUpFile(ctx context.Context, idx *flatIndex, from, to uint64) (int, error) {
	if !x.keepsVectors() {
		n, err := x.embedFromStore(ctx, idx, from, to)
		if err == nil {
			idx.done(to)
		}
		return int(n), err
	}
	added := 0
	for cur := from; cur < to; {
		if err := ctx.Err(); err != nil {
			return added, err
		}
		msgs, next, err := x.st.Since(cur, 256)
		if err != nil {
			return added, err
		}
		if len(msgs) == 0 {
			break
		}
		ids := make([]uuid.UUID, 0, len(msgs))
		vecs := make([][]byte, 0, len(msgs))
		err = x.st.DB().View(func(txn *badger.Txn) error {
			for _, m := range msgs {
				id, err := uuid.Parse(m.ID)
				if err != nil || !indexable(m) {
					continue
				}
				it, err := txn.Get(x.vecKey(id))
				if errors.Is(err, badger.ErrKeyNotFound) {
					continue // arrived after the embedding cursor: not embedded yet
				}
				if err != nil {
					return err
				}
				b, err := it.ValueCopy(nil)
				if err != nil {
					return err
				}
				ids, vecs = append(ids, id), append(vecs, b)
			}
			return nil
		})
		if err != nil {
			return added, fmt.Errorf("recall: load vectors: %w", err)
		}
		x.c.mu.RLock()
		for i, id := range ids {
			doc, ok := x.c.byID.get(x.c.docs, id)
			if !ok {
				continue
			}
			if idx.addStored(doc, id, x.c.chans[x.c.docs[doc].ch], vecs[i]) == nil {
				added++
			}
		}
		x.c.mu.RUnlock()
		cur = min(next, to)
	}
	idx.done(to)
	return added, nil
}

// removeVecFiles removes the vector files of other embedders, and this
// one's too when all is set.
func (x *Index) removeVecFiles(all bool) {
	if x.o.CacheDir == "" {
		return
	}
	names, _ := filepath.Glob(filepath.Join(x.o.CacheDir, "vectors-*.vec*"))
	mine := x.vecFilePath()
	for _, name := range names {
		if !all && strings.HasPrefix(name, mine) {
			continue
		}
		if err := os.Remove(name); err == nil {
			x.log.Info("removed a vector file", "file", filepath.Base(name))
		}
	}
}
