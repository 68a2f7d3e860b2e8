package recall

import (
	"context"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/backoff"
	"github.com/cyan-agent/cyan/journal"
)

// Sync indexes everything stored so far (lexical and vectors) and returns.
// Run does the same continuously; Sync serves the benchmarks and tests.
func (x *Index) Sync(ctx context.Context) error {
	if err := x.catchUpLexical(ctx); err != nil {
		return err
	}
	if x.vecOff {
		return x.SyncRecords(ctx)
	}
	if !x.vecReady.Load() {
		if err := x.loadVectors(ctx); err != nil {
			return err
		}
	}
	if err := x.catchUpVectors(ctx); err != nil {
		return err
	}
	return x.SyncRecords(ctx)
}

// Run keeps the index up to date until ctx ends, and returns nil then: it
// loads the lexical index from the store (recall answers from what is
// loaded meanwhile), then follows the journal's message events while it
// loads the vectors (lexical-only answers say so until then). An embedder
// that fails (a remote server that is down) is retried with backoff while
// lexical search goes on.
func (x *Index) Run(ctx context.Context) error {
	defer x.prep.Wait()
	var watchers sync.WaitGroup
	defer watchers.Wait()
	sig := x.watch(ctx, &watchers, journal.MessageIn, journal.MessageOut, journal.MessageTool, journal.MessagesImported)
	defer x.saveCache()
	var records sync.WaitGroup
	defer records.Wait()
	if x.o.Records != nil {
		records.Go(func() { x.followRecords(ctx) })
	}
	// A failure here is logged and retried, never fatal to the daemon:
	// recall answers with what it has (and says so) meanwhile.
	for attempt := 0; ; attempt++ {
		err := x.catchUpLexical(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		x.log.Error("loading the lexical index failed; retrying", "err", err)
		if !backoff.Sleep(ctx, loadRetry.Delay(attempt)) {
			return nil
		}
	}
	x.log.Info("lexical index ready", "messages", x.c.size())
	if err := x.saveLexical(); err != nil {
		x.log.Warn("the lexical snapshot was not written; the next start reads the store", "err", err)
	}
	if x.vecOff {
		x.log.Info("vectors off: the ranking gives them no weight", "embedder", x.emb.ID())
		if err := x.dropVectors(true); err != nil {
			x.log.Warn("could not remove the stored vectors", "err", err)
		}
		x.followLexical(ctx, sig, nil)
		return nil
	}
	// The vectors load (or their file is rebuilt) beside the lexical
	// index, which follows new messages meanwhile; recall answers by words
	// until they are ready.
	vecSig := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		if !x.loadVectorsRetrying(ctx) {
			return
		}
		x.log.Info("vector index ready", "vectors", x.vecs.Load().idx.count(), "embedder", x.emb.ID())
		x.followVectors(ctx, vecSig)
	})
	defer wg.Wait()
	vecSig <- struct{}{}
	x.followLexical(ctx, sig, vecSig)
	return nil
}

// loadVectorsRetrying loads the vector index, retrying with backoff; it
// returns false when ctx ended first.
func (x *Index) loadVectorsRetrying(ctx context.Context) bool {
	for attempt := 0; ; attempt++ {
		err := x.loadVectors(ctx)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		x.log.Error("loading the vector index failed; recall answers by words only until it loads", "err", err)
		if !backoff.Sleep(ctx, loadRetry.Delay(attempt)) {
			return false
		}
	}
}

// followLexical indexes new messages by words on each signal until ctx
// ends, then passes the signal on to vecSig (nil: the vectors are off).
func (x *Index) followLexical(ctx context.Context, sig <-chan struct{}, vecSig chan<- struct{}) {
	var save <-chan time.Time // followVectors saves when the vectors are on
	if vecSig == nil {
		t := time.NewTicker(x.o.SaveEvery)
		defer t.Stop()
		save = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-save:
			x.saveCache()
			continue
		case <-sig:
		}
		if err := x.catchUpLexical(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			x.log.Error("lexical indexing failed; the next message retries it", "err", err)
		}
		if vecSig == nil {
			continue
		}
		select {
		case vecSig <- struct{}{}:
		default:
		}
	}
}

// The retry schedules: loading the index from the store, and embedding or
// indexing the records after a failure.
var (
	loadRetry = backoff.Policy{Base: time.Second, Max: time.Minute}
	stepRetry = backoff.Policy{Base: 2 * time.Second, Max: 2 * time.Minute}
)

// watch returns a 1-slot signal that fires after journal events of the
// kinds; signals coalesce, so a busy reader sees one for many events.
func (x *Index) watch(ctx context.Context, wg *sync.WaitGroup, kinds ...journal.Kind) <-chan struct{} {
	sig := make(chan struct{}, 1)
	j := x.st.Journal()
	sub := j.Subscribe(j.Last(), journal.Filter{Kinds: kinds})
	wg.Go(func() {
		for {
			if _, err := sub.Next(ctx); err != nil {
				return // ctx ended or the journal closed
			}
			select {
			case sig <- struct{}{}:
			default:
			}
		}
	})
	return sig
}

// followVectors embeds new messages as they come; failures back off from
// 2 s to 2 minutes.
func (x *Index) followVectors(ctx context.Context, sig <-chan struct{}) {
	failures := 0
	dropped := false
	save := time.NewTicker(x.o.SaveEvery)
	defer save.Stop()
	for {
		var retry <-chan time.Time
		if failures > 0 {
			retry = time.After(stepRetry.Delay(failures - 1))
		}
		select {
		case <-ctx.Done():
			return
		case <-save.C:
			x.saveCache()
			continue
		case <-sig:
		case <-retry:
		}
		before := x.embCur.Load()
		err := x.catchUpVectors(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			failures++
			x.log.Warn("embedding failed; recall answers lexical-only for new messages until it works", "err", err, "retry_in", stepRetry.Delay(failures-1))
		default:
			if failures > 0 || x.embCur.Load()-before > 10000 {
				x.log.Info("embeddings caught up", "vectors", x.embCount.Load())
			}
			failures = 0
			if !dropped {
				dropped = true
				if err := x.dropOtherEmbedders(); err != nil {
					x.log.Warn("could not remove a previous embedder's vectors", "err", err)
				}
			}
		}
	}
}

// recordsEvery is the least time between two rebuilds of the records'
// side: changes that come faster (a burst of titles after an import) are
// taken together at its end.
const recordsEvery = 2 * time.Second

// followRecords rebuilds the records' side at start and after each change
// of the event log's records (journal.RecordsChanged); a failed rebuild is
// retried with backoff.
func (x *Index) followRecords(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	changed := x.watch(ctx, &wg, journal.RecordsChanged)
	sig := make(chan struct{}, 1)
	sig <- struct{}{}
	failures := 0
	var last time.Time // the last rebuild
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
		case <-changed:
		}
		// The first change after a quiet spell is indexed at once; the
		// ones that follow within RecordsDelay wait for its end and go
		// together (a burst of titles after an import).
		wait := time.Until(last.Add(x.o.RecordsDelay))
		if failures > 0 {
			wait = max(wait, stepRetry.Delay(failures-1))
		}
		if !backoff.Sleep(ctx, wait) {
			return
		}
		select { // changes during the wait are in this rebuild
		case <-changed:
		default:
		}
		last = time.Now()
		if err := x.SyncRecords(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			x.log.Warn("indexing event and theory texts failed; retrying", "err", err, "retry_in", stepRetry.Delay(failures-1))
			sig <- struct{}{}
			continue
		}
		failures = 0
	}
}

// saveCache writes the lexical snapshot and the vector cache when they
// have changed.
func (x *Index) saveCache() {
	if err := x.saveLexical(); err != nil {
		x.log.Warn("the lexical snapshot was not written; the next start reads the store", "err", err)
	}
	path := x.cachePath()
	if path == "" || !x.dirty.Swap(false) {
		return
	}
	x.c.mu.RLock()
	err := x.vecs.Load().idx.save(path)
	x.c.mu.RUnlock()
	if err != nil {
		x.dirty.Store(true)
		x.log.Warn("the vector cache was not written; it will be rebuilt at the next start", "err", err)
	}
}

// Status reports how far the index is.
type Status struct {
	// Messages is how many stored messages there are (arrivals), Indexed
	// how many the lexical index has read, Embedded how many the embedder
	// has read (both count skipped tool/system messages too).
	Messages uint64 `json:"messages"`
	Indexed  uint64 `json:"indexed"`
	Embedded uint64 `json:"embedded"`
	// Documents and Vectors count what is searchable; Records the events
	// and theories indexed beside the messages.
	Documents    int  `json:"documents"`
	Records      int  `json:"records"`
	Vectors      int  `json:"vectors"`
	LexicalReady bool `json:"lexical_ready"`
	VectorReady  bool `json:"vector_ready"`
	// VectorsOff: the ranking gives the vectors no weight (HashEmbedder's
	// default, or embed.vector_weight), so none are made or kept; Embedded
	// stays 0.
	VectorsOff bool   `json:"vectors_off,omitempty"`
	Embedder   string `json:"embedder"`
	IndexKind  string `json:"index"`
	EmbedError string `json:"embed_error,omitempty"`
	// EmbedRefused counts the messages the embedder refused since the
	// daemon started (a NaN vector, a length its runner will not take):
	// they are found by words only.
	EmbedRefused uint64 `json:"embed_refused,omitempty"`
	// EmbedUsage meters a model embedder's calls (nil for the built-in).
	EmbedUsage *EmbedUsage `json:"embed_usage,omitempty"`
}

// Status returns the index's progress.
func (x *Index) Status() Status {
	s := Status{
		Messages: x.st.LastArrival(), Indexed: max(x.lexCur.Load(), x.scanned.Load()), Embedded: x.embCur.Load(),
		Documents: x.c.size(), Records: x.recordCount(), Vectors: x.vecs.Load().idx.count(),
		LexicalReady: x.lexReady.Load(), VectorReady: x.vecReady.Load(), VectorsOff: x.vecOff, Embedder: x.emb.ID(), IndexKind: x.o.IndexKind,
	}
	if e := x.embedErr.Load(); e != nil {
		s.EmbedError = *e
	}
	s.EmbedRefused = x.embSkipped.Load()
	if m, ok := x.emb.(*ModelEmbedder); ok {
		u := m.Usage()
		s.EmbedUsage = &u
	}
	return s
}
