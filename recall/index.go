package recall

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
)

// Options configure New.
type Options struct {
	Store *store.Store
	// Embedder makes the vectors (nil: the built-in GloveEmbedder).
	Embedder Embedder
	// IndexKind is IndexFlat (the default) or IndexChromem.
	IndexKind string
	// VectorWeight is the vector side's weight in the fusion, BM25's being
	// 1 (0 chooses: for the built-in GloveEmbedder the weight
	// cross-validation on LoCoMo picks (defaultParams); none for
	// HashEmbedder, whose features are BM25's words and cost recall under
	// cross-validation; 1 for a model embedder).
	VectorWeight float64
	// CacheDir holds the lexical snapshot, the flat index's vector file
	// (the codes of its vectors, read from disk at search) and chromem's
	// cache file ("" keeps none: every start reads the whole store, and
	// the flat index keeps its codes on the heap).
	CacheDir string
	// SaveEvery bounds how long new messages and vectors stay out of the
	// snapshot and cache files (0: 5 minutes). Both are also written on a
	// clean stop.
	SaveEvery time.Duration
	Logger    *slog.Logger // nil: discard
	// Judge runs tool mode's LLM pass (nil: tool mode answers like search
	// mode and says so).
	Judge Judge
	// Rewrite has tool mode first turn the request into search queries
	// when the Judge is a Rewriter (the recall_rewrite script).
	Rewrite bool
	// Records, when set, adds event and theory texts to what recall finds.
	Records Records
	// RecordsDelay is how long Run lets changes of the records gather
	// before it indexes them again (0: 2 s; negative: none).
	RecordsDelay time.Duration
	// regularVerbs tokenizes as the release before the irregular verbs
	// did (stemCache.regular): the LoCoMo report's "before" index, which
	// keeps no snapshot (a snapshot read back tokenizes as today).
	regularVerbs bool
}

// Index is the recall index of one store: lexical and vector, kept up to
// date by Run.
type Index struct {
	o     Options
	st    *store.Store
	emb   Embedder
	fp    [8]byte // fingerprint of the embedder's ID
	log   *slog.Logger
	c     *corpus
	vecs  atomic.Pointer[vectorHolder]
	lexMu sync.Mutex // one lexical catch-up at a time
	// prep joins the goroutine that makes the searches' accumulator
	// ready (lexicon.prepare); Run waits for it before it returns.
	prep      sync.WaitGroup
	lexLoaded bool // the first full read is done (guarded by lexMu)
	lexCur    atomic.Uint64
	scanned   atomic.Uint64 // messages read by the first full read
	embMu     sync.Mutex
	// readTable reads the built-in embedder's table (gloveTableOnce; a
	// test makes it slow).
	readTable func() error
	embCur    atomic.Uint64
	// embCount is the number of stored vectors of this embedder.
	embCount atomic.Uint64
	lexReady atomic.Bool
	vecReady atomic.Bool
	embedErr atomic.Pointer[string]
	// embSkipped counts the messages the embedder refused since start.
	embSkipped atomic.Uint64
	dirty      atomic.Bool
	lastSave   time.Time
	recs       atomic.Pointer[recordIndex]
	rs         recordState
	p          params
	// vecOff: the ranking gives the vectors no weight (the built-in
	// embedder by default), so none are made, loaded or kept.
	vecOff bool
	// lexDirty: the corpus changed since the last lexical snapshot.
	lexDirty atomic.Bool
	// vecHeap is how many bytes of a vector file's codes the flat index
	// keeps on the heap too (vecHeapMax).
	vecHeap int
}

type vectorHolder struct{ idx vectorIndex }

// New builds an empty index; Run (or Sync) fills it from the store.
func New(o Options) (*Index, error) {
	if o.Store == nil {
		return nil, errors.New("recall: no store")
	}
	if o.Embedder == nil {
		o.Embedder = GloveEmbedder{}
	}
	switch o.IndexKind {
	case "":
		o.IndexKind = IndexFlat
	case IndexFlat, IndexChromem:
	default:
		return nil, fmt.Errorf("recall: index kind %q is not %s or %s", o.IndexKind, IndexFlat, IndexChromem)
	}
	if o.SaveEvery <= 0 {
		o.SaveEvery = 5 * time.Minute
	}
	switch {
	case o.RecordsDelay == 0:
		o.RecordsDelay = recordsEvery
	case o.RecordsDelay < 0:
		o.RecordsDelay = 0
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	x := &Index{o: o, st: o.Store, emb: o.Embedder, log: log, c: newCorpus(), p: defaultParams, vecHeap: vecHeapMax,
		readTable: func() error { _, err := gloveTableOnce(); return err }}
	x.c.stems.regular = o.regularVerbs
	switch {
	case o.VectorWeight > 0:
		x.p.vecWeight = o.VectorWeight
	case isBuiltin(o.Embedder):
		x.p.vecWeight = 0
	case !isLocal(o.Embedder):
		x.p.vecWeight = modelVectorWeight
	}
	x.vecOff = x.p.vecWeight == 0
	x.fp = embedderFP(o.Embedder)
	x.vecs.Store(&vectorHolder{idx: x.newVectorIndex()})
	return x, nil
}

// embedderFP is the fingerprint of an embedder's ID that names its keys
// and files.
func embedderFP(e Embedder) (fp [8]byte) {
	sum := sha256.Sum256([]byte(e.ID()))
	copy(fp[:], sum[:8])
	return fp
}

// newVectorIndex makes an empty vector index of the configured kind; a
// flat one keeps its codes on the heap until loadVectors gives it a file.
func (x *Index) newVectorIndex() vectorIndex {
	if x.o.IndexKind == IndexChromem {
		return newChromemIndex(func(id uuid.UUID) (uint32, bool) {
			d, ok := x.c.byID.get(x.c.docs, id) // the caller holds c.mu for reading
			return d, ok
		})
	}
	return newFlatIndex()
}

// Embedder returns the embedder in use.
func (x *Index) Embedder() Embedder { return x.emb }

// Key layout inside store.PrefixRecall.
func (x *Index) vecKey(id uuid.UUID) []byte {
	k := make([]byte, 0, len(store.PrefixRecall)+1+8+16)
	k = append(k, store.PrefixRecall...)
	k = append(k, 'e')
	k = append(k, x.fp[:]...)
	return append(k, id[:]...)
}

func (x *Index) vecPrefix() []byte {
	return append(append([]byte(store.PrefixRecall), 'e'), x.fp[:]...)
}

func (x *Index) stateKey() []byte {
	return append(append([]byte(store.PrefixRecall), 's'), x.fp[:]...)
}

func (x *Index) cachePath() string {
	if x.o.CacheDir == "" {
		return ""
	}
	return filepath.Join(x.o.CacheDir, fmt.Sprintf("vectors-%x.gob.gz", x.fp))
}

// encodeVec stores a vector as int8 codes and a scale (a quarter of
// float32's size; cosine error under 1%).
func encodeVec(v []float32) []byte {
	b := make([]byte, 4+len(v))
	codes := make([]int8, len(v))
	s := quantize(v, codes)
	binary.LittleEndian.PutUint32(b, math.Float32bits(s))
	for i, c := range codes {
		b[4+i] = byte(c)
	}
	return b
}

func decodeVec(b []byte) ([]float32, error) {
	if len(b) < 5 {
		return nil, errors.New("short vector")
	}
	s := math.Float32frombits(binary.LittleEndian.Uint32(b))
	v := make([]float32, len(b)-4)
	for i := range v {
		v[i] = float32(int8(b[4+i])) * s
	}
	normalize(v)
	return v, nil
}

// readState reads this embedder's durable cursor and vector count.
func (x *Index) readState() (cursor, count uint64, err error) {
	err = x.st.DB().View(func(txn *badger.Txn) error {
		it, err := txn.Get(x.stateKey())
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error {
			if len(v) != 16 {
				return fmt.Errorf("recall: corrupt embedding state (%d bytes)", len(v))
			}
			cursor, count = binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])
			return nil
		})
	})
	return
}

// catchUpLexical indexes every message stored after the lexical cursor.
// The first time, it reads the whole store in key order (sequential reads;
// decoding on one core, tokenizing and indexing on another), then follows
// the arrival log from that snapshot's cursor. Once caught up, it has
// the searches' accumulator made ready (lexicon.prepare) in the
// background.
func (x *Index) catchUpLexical(ctx context.Context) error {
	x.lexMu.Lock()
	defer x.lexMu.Unlock()
	if !x.lexLoaded && x.openLexical() {
		x.lexLoaded = true
	}
	if !x.lexLoaded {
		x.c.reserve(int(min(x.st.LastArrival(), maxDocs)))
		batches := make(chan []*store.Message, 4)
		var cursor uint64
		var scanErr error
		go func() {
			defer close(batches)
			cursor, scanErr = x.st.ScanAll(2000, func(ms []*store.Message) error {
				select {
				case batches <- ms:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
		}()
		for ms := range batches {
			x.c.add(ms)
			x.scanned.Add(uint64(len(ms)))
		}
		x.lexDirty.Store(true)
		if scanErr != nil {
			return scanErr
		}
		x.lexCur.Store(cursor)
		x.lexLoaded = true
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		msgs, next, err := x.st.Since(x.lexCur.Load(), 2000)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			x.lexReady.Store(true)
			x.c.mu.RLock()
			lex, n := x.c.lex, x.c.lex.docLen.n()
			x.c.mu.RUnlock()
			if lex.unprepared(n) {
				// Off the start's path: recall is complete by words
				// now, and a search meanwhile makes its own.
				x.prep.Go(func() { lex.prepare(n) })
			}
			return nil
		}
		x.c.add(msgs)
		x.lexCur.Store(next)
		x.lexDirty.Store(true)
	}
}

// openLexical fills the corpus from the lexical snapshot, when there is
// one that fits the store: its cursor not past the store's last arrival
// and its newest document still stored. Anything else is thrown away (the
// caller then reads the whole store). The caller holds lexMu.
func (x *Index) openLexical() bool {
	path := x.lexPath()
	if path == "" {
		return false
	}
	c, cursor, err := readLexical(path)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err == nil && cursor > x.st.LastArrival() {
		err = fmt.Errorf("%w: stale (it has read to %d, the store has %d)", errSnap, cursor, x.st.LastArrival())
	}
	if err == nil && len(c.docs) > 0 {
		if _, gerr := x.st.Get(c.docs[len(c.docs)-1].id.String()); gerr != nil {
			err = fmt.Errorf("%w: stale (its newest message is not in the store: %v)", errSnap, gerr)
		}
	}
	if err != nil {
		x.log.Warn("the lexical snapshot does not fit the store; rebuilding the index from it", "err", err)
		_ = os.Remove(path)
		return false
	}
	x.c.mu.Lock()
	x.c.docs, x.c.byID, x.c.chans, x.c.chIdx, x.c.order, x.c.chLen, x.c.lex, x.c.sessions = c.docs, c.byID, c.chans, c.chIdx, c.order, c.chLen, c.lex, c.sessions
	x.c.mu.Unlock()
	x.lexCur.Store(cursor)
	x.scanned.Store(cursor)
	x.log.Info("lexical index opened from its snapshot", "messages", len(c.docs), "cursor", cursor)
	return true
}

// loadVectors fills the vector index: the flat one from its vector file
// (vecload.go), chromem from its cache file, each from the embeddings in
// Badger when its file is missing, unreadable or disagrees with the
// store's; without a CacheDir, from the embeddings. The built-in
// embedder's table is read first.
func (x *Index) loadVectors(ctx context.Context) error {
	x.embMu.Lock()
	defer x.embMu.Unlock()
	// The built-in embedder reads its table (about 0.2 s, seconds on a
	// busy machine) here, as the vectors load, not in the first search
	// after a start; a shutdown does not wait for it.
	if _, ok := x.emb.(GloveEmbedder); ok {
		if err := untilDone(ctx, x.readTable); err != nil {
			return err
		}
	}
	cursor, count, err := x.readState()
	if err != nil {
		return err
	}
	x.embCur.Store(cursor)
	x.embCount.Store(count)
	// The index being replaced saves what it has first (its vector file
	// is the one opened next).
	if err := x.vecs.Load().idx.close(); err != nil {
		x.log.Warn("the vector file was not saved; it will be rebuilt", "err", err)
	}
	if x.o.IndexKind == IndexFlat && x.o.CacheDir != "" {
		return x.loadFlatFile(ctx, cursor, count)
	}
	idx := x.newVectorIndex()
	if path := x.cachePath(); path != "" && x.o.IndexKind == IndexChromem {
		err := idx.load(path)
		switch {
		case err == nil && uint64(idx.count()) == count:
			x.log.Info("vector index loaded from its cache", "vectors", count)
			x.vecs.Store(&vectorHolder{idx: idx})
			x.vecReady.Store(true)
			return nil
		case err == nil:
			x.log.Warn("the vector cache disagrees with the store; rebuilding it", "cache", idx.count(), "store", count)
		case errors.Is(err, os.ErrNotExist):
			if count > 0 {
				x.log.Info("no vector cache; building it from the stored embeddings", "vectors", count)
			}
		default:
			x.log.Warn("the vector cache is unreadable; rebuilding it from the stored embeddings", "err", err)
		}
		_ = os.Remove(path)
		idx = x.newVectorIndex()
	}
	n, err := x.fillFromStore(ctx, idx, cursor)
	if err != nil {
		return err
	}
	x.holdVectors(idx, n, count)
	x.dirty.Store(x.o.IndexKind == IndexChromem)
	return nil
}

// untilDone runs f and returns its error, or ctx's when ctx ends first:
// f then goes on alone and its result is dropped. It is for work that
// cannot be interrupted and is harmless to finish late, such as reading a
// compiled-in table once; its goroutine ends with f, and a panic in f is
// its error, not the daemon's end.
func untilDone(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- fmt.Errorf("recall: %v", v)
			}
		}()
		done <- f()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// holdVectors makes idx, filled with n of the count vectors the store
// said it kept, the index searches use, and the count the true one.
func (x *Index) holdVectors(idx vectorIndex, n, count uint64) {
	x.vecs.Store(&vectorHolder{idx: idx})
	x.vecReady.Store(true)
	if n != count {
		x.embCount.Store(n)
	}
}

// fillFromStore adds every embedding of this embedder kept in Badger whose
// message is indexed to idx, and returns how many it added. It holds the
// corpus for reading a chunk at a time, so the lexical index follows new
// messages meanwhile.
func (x *Index) fillFromStore(ctx context.Context, idx vectorIndex, cursor uint64) (uint64, error) {
	if !x.keepsVectors() {
		return x.embedFromStore(ctx, idx, 0, cursor)
	}
	n := uint64(0)
	err := x.st.DB().View(func(txn *badger.Txn) error {
		p := x.vecPrefix()
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true, PrefetchSize: 1000})
		defer it.Close()
		x.c.mu.RLock()
		defer func() { x.c.mu.RUnlock() }()
		seen := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if seen++; seen%4096 == 0 { // let the lexical index write
				x.c.mu.RUnlock()
				err := ctx.Err()
				x.c.mu.RLock()
				if err != nil {
					return err
				}
			}
			id, err := uuid.FromBytes(it.Item().Key()[len(p):])
			if err != nil {
				continue
			}
			doc, ok := x.c.byID.get(x.c.docs, id)
			if !ok {
				continue // the message is gone
			}
			ch := x.c.chans[x.c.docs[doc].ch]
			err = it.Item().Value(func(b []byte) error { return addCodes(idx, doc, id, ch, b) })
			if errors.Is(err, errVecWrite) {
				return err // the vector file cannot be made
			}
			if err != nil {
				continue // not a vector of this index
			}
			n++
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("recall: load vectors: %w", err)
	}
	return n, nil
}

// keepsVectors reports whether the embedder's vectors are kept in Badger.
// The built-in GloveEmbedder's are not: made again from a message's text
// in microseconds, they would cost a million-message history about a
// tenth of a gigabyte of tables, and its import the memory and the time
// of writing and compacting them. Its vector file is rebuilt by embedding
// the stored messages again (embedFromStore). (HashEmbedder's, at weight
// 0 unless asked, are kept as a model's are.)
func (x *Index) keepsVectors() bool {
	_, glove := x.emb.(GloveEmbedder)
	return !glove
}

// embedFromStore adds to idx the vectors of the messages that arrived in
// (from, to], made again from their texts by the (local) embedder, and
// returns how many it added. The caller holds embMu.
func (x *Index) embedFromStore(ctx context.Context, idx vectorIndex, from, to uint64) (uint64, error) {
	n := uint64(0)
	for cur := from; cur < to; {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		msgs, next, err := x.st.SinceUpTo(cur, to, x.embedBatch())
		if err != nil {
			return n, err
		}
		if next == cur {
			break
		}
		keep, texts := embeddable(msgs)
		vecs, err := x.emb.Embed(ctx, texts)
		if err != nil {
			return n, fmt.Errorf("recall: embed again: %w", err)
		}
		x.c.mu.RLock()
		for i, m := range keep {
			id, err := uuid.Parse(m.ID)
			if err != nil {
				continue
			}
			doc, ok := x.c.byID.get(x.c.docs, id)
			if !ok {
				continue // the message is gone
			}
			err = addCodes(idx, doc, id, x.c.chans[x.c.docs[doc].ch], encodeVec(vecs[i]))
			if errors.Is(err, errVecWrite) {
				x.c.mu.RUnlock()
				return n, err // the vector file cannot be made
			}
			if err == nil {
				n++
			}
		}
		x.c.mu.RUnlock()
		cur = min(next, to)
	}
	return n, nil
}

// embeddable picks the messages that get a vector, and their texts.
func embeddable(msgs []*store.Message) (keep []*store.Message, texts []string) {
	for _, m := range msgs {
		if indexable(m) {
			keep = append(keep, m)
			texts = append(texts, indexText(m))
		}
	}
	return keep, texts
}

// addCodes adds a vector in its stored encoding (encodeVec's) to idx: a
// flat index takes the codes as they are.
func addCodes(idx vectorIndex, doc uint32, id uuid.UUID, ch string, b []byte) error {
	if fi, ok := idx.(*flatIndex); ok {
		return fi.addStored(doc, id, ch, b)
	}
	v, err := decodeVec(b)
	if err != nil {
		return err
	}
	return idx.add(doc, id, ch, v)
}

// modelVectorWeight is the default fusion weight of a model embedder.
const modelVectorWeight = 1.0

// isBuiltin reports the hashing embedder (HashEmbedder), whose features
// are BM25's own words: no vector weight unless configured, and no
// matches by vector alone.
func isBuiltin(e Embedder) bool {
	_, ok := e.(HashEmbedder)
	return ok
}

// isLocal reports an embedder that runs in this process (HashEmbedder,
// GloveEmbedder): microseconds a text, no calls.
func isLocal(e Embedder) bool {
	switch e.(type) {
	case HashEmbedder, GloveEmbedder:
		return true
	}
	return false
}

// embedBatch is how many messages are embedded per store transaction.
func (x *Index) embedBatch() int {
	if isLocal(x.emb) {
		return 2000
	}
	return 64
}

// catchUpVectors embeds every message stored after the embedding cursor,
// keeps the vectors in Badger with the cursor (one transaction per batch,
// so a restart resumes exactly; the built-in GloVe vectors are not kept,
// keepsVectors) and adds them to the vector index.
func (x *Index) catchUpVectors(ctx context.Context) error {
	x.embMu.Lock()
	defer x.embMu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		cur := x.embCur.Load()
		msgs, next, err := x.st.Since(cur, x.embedBatch())
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return nil
		}
		keep, texts := embeddable(msgs)
		var vecs [][]float32
		if len(texts) > 0 {
			var skipped int
			vecs, skipped, err = embedIsolating(ctx, x.emb, texts)
			if err != nil {
				msg := err.Error()
				x.embedErr.Store(&msg)
				return err
			}
			x.embedErr.Store(nil)
			if skipped > 0 {
				x.embSkipped.Add(uint64(skipped))
				for i, v := range vecs {
					if v == nil {
						x.log.Warn("the embedder refused a message; it is found by words only", "message", keep[i].ID, "embedder", x.emb.ID())
					}
				}
			}
		}
		count := x.embCount.Load()
		for _, v := range vecs {
			if v != nil {
				count++
			}
		}
		err = x.st.DB().Update(func(txn *badger.Txn) error {
			for i, m := range keep {
				id, err := uuid.Parse(m.ID)
				if err != nil || vecs[i] == nil || !x.keepsVectors() {
					continue
				}
				if err := txn.Set(x.vecKey(id), encodeVec(vecs[i])); err != nil {
					return err
				}
			}
			st := make([]byte, 16)
			binary.BigEndian.PutUint64(st, next)
			binary.BigEndian.PutUint64(st[8:], count)
			return txn.Set(x.stateKey(), st)
		})
		if err != nil {
			return fmt.Errorf("recall: keep vectors: %w", err)
		}
		x.embCur.Store(next)
		x.embCount.Store(count)
		if err := x.catchUpLexical(ctx); err != nil {
			return err
		}
		idx := x.vecs.Load().idx
		x.c.mu.RLock()
		for i, m := range keep {
			if vecs[i] == nil {
				continue
			}
			id, _ := uuid.Parse(m.ID)
			if doc, ok := x.c.byID.get(x.c.docs, id); ok {
				_ = idx.add(doc, id, m.Channel, vecs[i])
			}
		}
		x.c.mu.RUnlock()
		idx.done(next)
		x.dirty.Store(x.o.IndexKind == IndexChromem || x.o.CacheDir != "")
		if total := x.st.LastArrival(); next/50000 != cur/50000 {
			x.log.Info("embedding", "done", next, "of", total, "embedder", x.emb.ID())
		}
	}
}

// dropOtherEmbedders deletes the vectors and cursors of embedders other
// than the current one, once the current one has caught up: Badger keeps
// the embeddings of the configured embedder only.
func (x *Index) dropOtherEmbedders() error { return x.dropVectors(false) }

// dropVectors deletes the vectors, cursors and vector files of other
// embedders, and of the current one too when all is set (the vectors are
// off: nobody reads them; turning them on again re-embeds in the
// background).
func (x *Index) dropVectors(all bool) error {
	var stale [][]byte
	err := x.st.DB().View(func(txn *badger.Txn) error {
		for _, kind := range []byte{'e', 's'} {
			p := append([]byte(store.PrefixRecall), kind)
			it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
			for it.Rewind(); it.Valid(); it.Next() {
				k := it.Item().Key()
				if len(k) >= len(p)+8 && (all || string(k[len(p):len(p)+8]) != string(x.fp[:])) {
					stale = append(stale, it.Item().KeyCopy(nil))
				}
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return err
	}
	x.removeVecFiles(all)
	if len(stale) == 0 {
		return nil
	}
	wb := x.st.DB().NewWriteBatch()
	defer wb.Cancel()
	for _, k := range stale {
		if err := wb.Delete(k); err != nil {
			return err
		}
	}
	if err := wb.Flush(); err != nil {
		return err
	}
	if all {
		x.log.Info("removed the stored vectors: the ranking gives them no weight (embed.vector_weight)", "keys", len(stale))
	} else {
		x.log.Info("removed the vectors of a previous embedder", "keys", len(stale))
	}
	return nil
}
