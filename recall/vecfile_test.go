package recall

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
	"github.com/google/uuid"
)

// vecFixture is a store on disk with a seeded synthetic history, an index
// over it that keeps its codes in a vector file, and two reference
// indexes that keep them on the heap, as the flat index did before it had
// a file. Their first pass keeps the first of equal candidates, so which
// is first matters: fresh embedded the history in arrival order, as the
// file's index did (an opened file has its slots in that order); loaded
// read the same vectors from Badger in key order, as a restarted heap
// index did and a rebuilt file does. Each reference is made when a test
// first asks for it (freshRef, loadedRef).
type vecFixture struct {
	dir, cache, file string
	st               *store.Store
	fresh, loaded    *Index
	queries          []string
	// answers keeps a reference's answers to the queries, computed once
	// for each state of the reference: same compares many indexes with
	// the same reference.
	answers map[answersKey]*refAnswers
}

// answersKey is a reference index in one state: synced to an arrival,
// asked a number of the fixture's queries.
type answersKey struct {
	ref     *Index
	arrival uint64
	queries int
}

// refAnswers is what a reference finds: for each query its vector top
// (all channels, then c3) and its search response, and its status.
type refAnswers struct {
	tops    [][2][]string
	results []*Response
	status  Status
}

// sameVectors is the built-in embedder under another name: the same
// vectors, kept under their own keys.
type sameVectors struct{ HashEmbedder }

func (sameVectors) ID() string { return "test:" + HashEmbedder{}.ID() }

// newVecFixture imports n seeded synthetic messages (and the small
// history), indexes them with a vector file, saves it as a clean stop
// does; the heap references are made when first asked for.
func newVecFixture(t *testing.T, n int) *vecFixture {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fillHistory(t, st)
	gen := newSynth(7)
	importSynth(t, st, gen, 0, n)
	f := &vecFixture{dir: dir, cache: filepath.Join(dir, "recall"), st: st}
	x, _ := newTestIndex(t, Options{Store: st, CacheDir: f.cache})
	syncIndex(t, x)
	x.saveCache()
	f.file = x.vecFilePath()
	f.queries = []string{"exam schedule", "微积分", "試験", "cherry trees walk"}
	for range 12 {
		f.queries = append(f.queries, gen.query())
	}
	return f
}

// freshRef is the heap reference that embedded the history in arrival
// order; loadedRef the one that read its vectors from Badger.
func (f *vecFixture) freshRef(t *testing.T) *Index {
	t.Helper()
	return f.ref(t, &f.fresh, Options{Store: f.st, Embedder: sameVectors{}, VectorWeight: 0.1})
}

func (f *vecFixture) loadedRef(t *testing.T) *Index {
	t.Helper()
	return f.ref(t, &f.loaded, Options{Store: f.st})
}

func (f *vecFixture) ref(t *testing.T, x **Index, o Options) *Index {
	t.Helper()
	if *x == nil {
		ref, _ := newTestIndex(t, o)
		syncIndex(t, ref)
		if fi, ok := ref.vecs.Load().idx.(*flatIndex); !ok || fi.file != nil {
			t.Fatal("a reference index must keep its codes on the heap")
		}
		*x = ref
	}
	return *x
}

// importSynth imports the seeded synthetic messages from to to (gen's
// next ones), a minute apart, over five channels.
func importSynth(t *testing.T, st *store.Store, gen *synth, from, to int) {
	t.Helper()
	msgs := make([]*store.Message, 0, to-from)
	for i := from; i < to; i++ {
		msgs = append(msgs, &store.Message{Channel: fmt.Sprintf("c%d", i%5), Role: store.RoleUser, User: gen.name(),
			Text: gen.sentence(), Time: t0.Add(time.Duration(i) * time.Minute), ExternalID: fmt.Sprint("s", i)})
	}
	if _, err := st.Import(msgs); err != nil {
		t.Fatal(err)
	}
}

// otherStoreFiles returns the vector files (same embedder) of another
// store with the small history and the first fewer, then the first more,
// of the messages a fixture imports: one store, its file saved at each
// size.
func otherStoreFiles(t *testing.T, fewer, more int) (atFewer, atMore []byte) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fillHistory(t, st)
	gen := newSynth(7)
	x, _ := newTestIndex(t, Options{Store: st, CacheDir: filepath.Join(dir, "recall")})
	var out [][]byte
	for i, n := range []int{fewer, more} {
		importSynth(t, st, gen, []int{0, fewer}[i], n)
		syncIndex(t, x)
		x.saveCache()
		b, err := os.ReadFile(x.vecFilePath())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out[0], out[1]
}

// open makes a fresh index over the fixture's store with its vector file
// and loads it as a restart does.
func (f *vecFixture) open(t *testing.T) *Index {
	t.Helper()
	x, _ := newTestIndex(t, Options{Store: f.st, CacheDir: f.cache})
	syncIndex(t, x)
	return x
}

// sync brings the references made so far up to the store.
func (f *vecFixture) sync(t *testing.T) {
	t.Helper()
	for _, ref := range []*Index{f.fresh, f.loaded} {
		if ref != nil {
			syncIndex(t, ref)
		}
	}
}

// same checks that y finds exactly what the heap index ref finds: the
// vector side's top 200 (message ids and scores) and the search results.
func (f *vecFixture) same(t *testing.T, y, ref *Index) {
	t.Helper()
	ctx := context.Background()
	top := func(x *Index, qv []float32, ch []string) []string {
		hits, err := x.vecs.Load().idx.search(ctx, qv, 200, ch, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, fmt.Sprintf("%s %.6f", x.c.docs[h.doc].id, h.sim))
		}
		return out
	}
	chans := [2][]string{nil, {"c3"}}
	key := answersKey{ref, f.st.LastArrival(), len(f.queries)}
	want := f.answers[key]
	if want == nil {
		want = &refAnswers{status: ref.Status()}
		for _, q := range f.queries {
			qv := HashEmbedder{}.Vector(q)
			var tops [2][]string
			for i, ch := range chans {
				if tops[i] = top(ref, qv, ch); len(tops[i]) == 0 {
					t.Fatalf("%q in %v: the heap index finds nothing", q, ch)
				}
			}
			a, err := ref.Search(ctx, Query{Prompt: q})
			if err != nil {
				t.Fatalf("%q: heap: %v", q, err)
			}
			want.tops = append(want.tops, tops)
			want.results = append(want.results, a)
		}
		if f.answers == nil {
			f.answers = map[answersKey]*refAnswers{}
		}
		f.answers[key] = want
	}
	for qi, q := range f.queries {
		qv := HashEmbedder{}.Vector(q)
		for i, ch := range chans {
			if a, b := want.tops[qi][i], top(y, qv, ch); !slices.Equal(a, b) {
				t.Fatalf("%q in %v: heap %v\nfile %v", q, ch, a, b)
			}
		}
		a := want.results[qi]
		b, err := y.Search(ctx, Query{Prompt: q})
		if err != nil || !b.Vector || len(a.Results) != len(b.Results) {
			t.Fatalf("%q: heap %d results, file %d (%v, vector %v)", q, len(a.Results), len(b.Results), err, b.Vector)
		}
		for i := range a.Results {
			if fmt.Sprint(a.Results[i]) != fmt.Sprint(b.Results[i]) {
				t.Fatalf("%q: result %d: heap %v\nfile %v", q, i, a.Results[i], b.Results[i])
			}
		}
	}
	if a, b := want.status, y.Status(); a.Vectors != b.Vectors || !b.VectorReady {
		t.Fatalf("status heap %+v, file %+v", a, b)
	}
}

// fileState reads the vector file's committed header.
func fileState(t *testing.T, path string) (count int, cursor uint64, info os.FileInfo) {
	t.Helper()
	v, err := openVecFile(path, embedderFP(HashEmbedder{}))
	if err != nil {
		t.Fatalf("the vector file does not open: %v", err)
	}
	defer v.close()
	if err := v.scan(func(int, uuid.UUID, []byte) {}); err != nil {
		t.Fatalf("the vector file does not read: %v", err)
	}
	info, _ = os.Stat(path)
	return v.n, v.cursor, info
}

// TestVectorFileOpensAtRestart: a stopped index leaves its codes in the
// vector file; the next start opens it (the same file, nothing rebuilt,
// nothing embedded) and finds exactly what an index with its codes on the
// heap finds. Vectors made after the last commit (a crash) are cut off
// and taken again from Badger.
func TestVectorFileOpensAtRestart(t *testing.T) {
	f := newVecFixture(t, 2000)
	count, cursor, before := fileState(t, f.file)
	if count != f.freshRef(t).Status().Vectors || cursor != f.st.LastArrival() {
		t.Fatalf("the file holds %d vectors to %d; the store %d to %d", count, cursor, f.freshRef(t).Status().Vectors, f.st.LastArrival())
	}
	embedded := &countingEmbedder{Embedder: HashEmbedder{}}
	y, _ := newTestIndex(t, Options{Store: f.st, CacheDir: f.cache, Embedder: embedded, VectorWeight: 0.1})
	syncIndex(t, y)
	if _, _, after := fileState(t, f.file); !os.SameFile(before, after) || embedded.n != 0 {
		t.Fatalf("the file was rebuilt (%v) or %d texts embedded again", !os.SameFile(before, after), embedded.n)
	}
	f.same(t, y, f.freshRef(t))

	// More messages are embedded, written to the file, never committed:
	// the daemon is killed before its next save.
	for i := range 50 {
		if err := f.st.Append(t0.Add(time.Duration(i)*time.Hour), &store.Message{Channel: "c1", Role: store.RoleUser, Text: fmt.Sprint("the violin recital number ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	syncIndex(t, y)
	f.sync(t)
	y.vecs.Load().idx.(*flatIndex).mu.Lock()
	y.vecs.Load().idx.(*flatIndex).file.flush()
	y.vecs.Load().idx.(*flatIndex).mu.Unlock()
	if n, _, _ := fileState(t, f.file); n != count {
		t.Fatalf("the header vouches for %d records before a commit, want %d", n, count)
	}
	f.queries = append(f.queries, "violin recital")
	z := f.open(t)
	f.same(t, z, f.freshRef(t))
	if n, cur, _ := fileState(t, f.file); n != f.freshRef(t).Status().Vectors || cur != f.st.LastArrival() {
		t.Fatalf("after catching up the file holds %d to %d; want %d to %d", n, cur, f.freshRef(t).Status().Vectors, f.st.LastArrival())
	}
}

// TestADamagedVectorFileIsRebuilt: a torn, damaged, foreign, stale or
// other-dimension vector file is thrown away and rebuilt from the
// embeddings in Badger (nothing embedded again); the rebuilt index finds
// exactly what the heap index finds, and the next start opens the rebuilt
// file. A torn newer header leaves the older commit, which is caught up.
func TestADamagedVectorFileIsRebuilt(t *testing.T) {
	f := newVecFixture(t, 600)
	good, err := os.ReadFile(f.file)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := newestHeader(good)
	rec := vecRecordSize(h.dims)
	// Another store's files, same embedder: behind this one's 600
	// messages, and ahead of them (more arrivals than this store has).
	behind, ahead := otherStoreFiles(t, 500, 700)
	fresh, loaded := f.freshRef(t), f.loadedRef(t)
	for _, damage := range []string{"torn records", "flipped byte", "torn headers", "garbage", "empty", "another embedder", "ahead of the store", "another store", "other dimensions", "torn newer header"} {
		t.Run(damage, func(t *testing.T) {
			b := slices.Clone(good)
			rebuilt := true
			switch damage {
			case "torn records":
				b = b[:vecRecordsAt+rec*int(h.count)/2]
			case "flipped byte":
				b[vecRecordsAt+rec*int(h.count)/2+20] ^= 0x40
			case "torn headers":
				b = b[:vecHeaderSize+10]
			case "garbage":
				b = []byte("cyanvec\x00 but not really, not at all, nothing like it")
			case "empty":
				b = nil
			case "another embedder":
				fp := embedderFP(HashEmbedder{Dims: 128})
				for s := range 2 {
					if hs, err := parseVecHeader(b[s*vecHeaderSize:]); err == nil {
						hs.fp = fp
						copy(b[s*vecHeaderSize:], hs.encode())
					}
				}
			case "ahead of the store":
				b = slices.Clone(ahead)
			case "another store":
				b = slices.Clone(behind)
			case "other dimensions":
				// The same embedder's id, vectors of another size: the
				// store's vectors, cut to 32 dimensions.
				w, err := createVecFile(filepath.Join(t.TempDir(), "v"), h.fp, 32)
				if err != nil {
					t.Fatal(err)
				}
				for i := range int(h.count) {
					r := good[vecRecordsAt+i*rec:]
					w.append(uuid.UUID(r[:16]), r[16:16+4+32])
				}
				w.cursor = h.cursor
				if err := w.commit(); err != nil {
					t.Fatal(err)
				}
				w.close()
				b, _ = os.ReadFile(w.path)
			case "torn newer header":
				// The newer slot is torn: the older commit (the file as it
				// was made, empty) is opened, its records past that cut
				// off, and caught up from Badger message by message.
				b[(h.seq%2)*vecHeaderSize+30] ^= 0xff
				if _, err := newestHeader(b); err != nil {
					t.Fatalf("the older header was not taken: %v", err)
				}
				rebuilt = false
			}
			if err := os.WriteFile(f.file, b, 0o600); err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			embedded := &countingEmbedder{Embedder: HashEmbedder{}}
			y, _ := newTestIndex(t, Options{Store: f.st, CacheDir: f.cache, Embedder: embedded, VectorWeight: 0.1, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			syncIndex(t, y)
			if got := strings.Contains(log.String(), "from the stored embeddings"); got != rebuilt {
				t.Fatalf("rebuilt %v, want %v; the log:\n%s", got, rebuilt, log.String())
			}
			if embedded.n != 0 {
				t.Fatalf("%d texts embedded again", embedded.n)
			}
			ref := loaded // rebuilt in Badger's key order
			if !rebuilt {
				ref = fresh // caught up in arrival order
			}
			f.same(t, y, ref)
			n, cur, rebuiltFile := fileState(t, f.file)
			if n != ref.Status().Vectors || cur != f.st.LastArrival() {
				t.Fatalf("the file holds %d vectors to %d; want %d to %d", n, cur, ref.Status().Vectors, f.st.LastArrival())
			}
			if _, err := os.Stat(f.file + ".tmp"); !os.IsNotExist(err) {
				t.Fatalf("the rebuild left its temporary file: %v", err)
			}
			// The next start opens the rebuilt file.
			z := f.open(t)
			if _, _, again := fileState(t, f.file); !os.SameFile(rebuiltFile, again) {
				t.Fatal("the rebuilt file was rebuilt again")
			}
			f.same(t, z, ref)
		})
	}
}

// TestRunKeepsTheVectorFile: Run writes the vector file as it embeds and
// commits it on a clean stop; switching the embedder removes the old
// embedder's file once the new one has caught up, and turning the vectors
// off removes this one's.
func TestRunKeepsTheVectorFile(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cache := filepath.Join(dir, "recall")
	run := func(x *Index, done func(Status) bool) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { x.Run(ctx) })
		waitFor(t, func() bool { return done(x.Status()) })
		cancel()
		wg.Wait()
	}
	x, _ := newTestIndex(t, Options{Store: st, CacheDir: cache})
	fillHistory(t, st)
	run(x, func(s Status) bool { return s.VectorReady && s.Embedded == s.Messages && s.Vectors == len(history) })
	if n, cur, _ := fileState(t, x.vecFilePath()); n != len(history) || cur != st.LastArrival() {
		t.Fatalf("after a clean stop the file holds %d to %d", n, cur)
	}
	y, _ := newTestIndex(t, Options{Store: st, CacheDir: cache, Embedder: HashEmbedder{Dims: 128}})
	run(y, func(s Status) bool {
		_, err := os.Stat(x.vecFilePath())
		return s.VectorReady && s.Vectors == len(history) && os.IsNotExist(err)
	})
	if _, err := os.Stat(y.vecFilePath()); err != nil {
		t.Fatalf("the new embedder's file: %v", err)
	}
	z, _ := newTestIndex(t, Options{Store: st, CacheDir: cache, Embedder: HashEmbedder{Dims: 128}, VectorWeight: hybridOff})
	run(z, func(s Status) bool {
		names, _ := filepath.Glob(filepath.Join(cache, "vectors-*"))
		return s.VectorsOff && s.LexicalReady && len(names) == 0
	})
}

// TestSignBitsOfCodes: the sign bits computed eight codes at a time are
// the codes above zero, for every dimension (also those not a multiple
// of eight).
func TestSignBitsOfCodes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dims := range []int{1, 7, 8, 63, 64, 65, 256, 300, 768} {
		for range 50 {
			codes := make([]byte, dims)
			for i := range codes {
				switch r.IntN(4) {
				case 0:
					codes[i] = 0
				case 1:
					codes[i] = byte([]int8{1, 127, -1, -128}[r.IntN(4)])
				default:
					codes[i] = byte(r.IntN(256))
				}
			}
			words := (dims + 63) / 64
			got := appendSignBits([]uint64{42}, codes, words)
			want := make([]uint64, words)
			for i, c := range codes {
				if int8(c) > 0 {
					want[i/64] |= 1 << (i % 64)
				}
			}
			if got[0] != 42 || !slices.Equal(got[1:], want) {
				t.Fatalf("%d dims: %x, want %x", dims, got[1:], want)
			}
		}
	}
}

// FuzzVectorFile: any bytes as a vector file are opened and read, or
// refused with an error; never a panic, never more records than the file
// holds.
func FuzzVectorFile(f *testing.F) {
	fp := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	w, err := createVecFile(filepath.Join(f.TempDir(), "seed"), fp, 8)
	if err != nil {
		f.Fatal(err)
	}
	for i := range 3 {
		var id uuid.UUID
		id[0] = byte(i)
		stored := make([]byte, 12)
		binary.LittleEndian.PutUint32(stored, 0x3c000000)
		stored[4+i] = 127
		w.append(id, stored)
	}
	w.cursor = 3
	w.commit()
	w.close()
	good, _ := os.ReadFile(w.path)
	f.Add(good)
	f.Add(good[:len(good)-5])
	f.Add(good[:vecRecordsAt])
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "v")
		os.WriteFile(p, b, 0o600)
		v, err := openVecFile(p, fp)
		if err != nil {
			return
		}
		defer v.close()
		seen := 0
		err = v.scan(func(slot int, _ uuid.UUID, stored []byte) {
			if slot != seen || len(stored) != 4+v.dims {
				t.Fatalf("record %d (want %d) of %d bytes in a file of %d dimensions", slot, seen, len(stored), v.dims)
			}
			seen++
		})
		if int64(vecRecordsAt+seen*v.rec) > int64(len(b)) {
			t.Fatalf("%d records read from %d bytes", seen, len(b))
		}
		if err == nil && seen != v.n {
			t.Fatalf("%d records read, %d vouched for", seen, v.n)
		}
	})
}

// BenchmarkFlatSearch768: one vector search (the top 120, as a search
// mode query asks) over 200k vectors of 768 dimensions, codes on the heap
// and in a vector file: the sign-bit pass over every vector and the exact
// pass over the shortlist, without the lexical side.
func BenchmarkFlatSearch768(b *testing.B) {
	const n, dims = 200_000, 768
	r := rand.New(rand.NewPCG(3, 4))
	vec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		normalize(v)
		return v
	}
	heap := newFlatIndex()
	file := newFileFlatIndex(filepath.Join(b.TempDir(), "v.vec"), [8]byte{1}, 0)
	for i := range n {
		stored := encodeVec(vec())
		var id uuid.UUID
		binary.LittleEndian.PutUint32(id[:], uint32(i))
		heap.addStored(uint32(i), id, fmt.Sprint("c", i%20), stored)
		file.addStored(uint32(i), id, fmt.Sprint("c", i%20), stored)
	}
	file.save("")
	q := vec()
	for _, idx := range []*flatIndex{heap, file} {
		name := "heap"
		if idx.file != nil {
			name = "file"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := idx.search(context.Background(), q, 120, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFlatSearch100: one vector search (the top 120) over 100k
// vectors of 100 dimensions, the built-in embedder's, in a vector file:
// every code read from the file (heapMax 0, as before the heap kept
// them) and the default, every code on the heap too.
func BenchmarkFlatSearch100(b *testing.B) {
	const n, dims = 100_000, 100
	r := rand.New(rand.NewPCG(3, 4))
	vec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		normalize(v)
		return v
	}
	fileOnly := newFileFlatIndex(filepath.Join(b.TempDir(), "a.vec"), [8]byte{1}, 0)
	withHeap := newFileFlatIndex(filepath.Join(b.TempDir(), "b.vec"), [8]byte{1}, vecHeapMax)
	for i := range n {
		stored := encodeVec(vec())
		var id uuid.UUID
		binary.LittleEndian.PutUint32(id[:], uint32(i))
		fileOnly.addStored(uint32(i), id, fmt.Sprint("c", i%20), stored)
		withHeap.addStored(uint32(i), id, fmt.Sprint("c", i%20), stored)
	}
	fileOnly.save("")
	withHeap.save("")
	q := vec()
	for _, c := range []struct {
		name string
		idx  *flatIndex
	}{{"file", fileOnly}, {"heap", withHeap}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.idx.search(context.Background(), q, 120, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFlatSearch768: at 768 dimensions (the sign bits' unrolled pass) the
// flat index, codes on the heap or in a file, finds a stored vector first
// when asked for it, ranks by score, and finds exactly what the general
// pass finds (the same vectors with a 769th dimension at zero).
func TestFlatSearch768(t *testing.T) {
	// 1,500 vectors: more than the shortlist of a top 10 (512), so the
	// sign bits' pass chooses, and more than the file's write buffer holds
	// (1 MiB, 1,330 records of 768 dimensions), so the file index reads
	// codes from the file (vectors 0 and n/2) and from its buffer (n-1).
	const n, dims = 1500, 768
	r := rand.New(rand.NewPCG(5, 6))
	vecs := make([][]float32, n)
	heap, general := newFlatIndex(), newFlatIndex()
	file := newFileFlatIndex(filepath.Join(t.TempDir(), "v.vec"), [8]byte{1}, 0)
	gauss := func() []float32 {
		v := make([]float32, dims, dims+1)
		for k := range v {
			v[k] = float32(r.NormFloat64())
		}
		normalize(v)
		return v
	}
	for i := range vecs {
		v := gauss()
		vecs[i] = v
		var id uuid.UUID
		binary.LittleEndian.PutUint32(id[:], uint32(i))
		for _, idx := range []*flatIndex{heap, file} {
			if err := idx.add(uint32(i), id, "c", v); err != nil {
				t.Fatal(err)
			}
		}
		if err := general.add(uint32(i), id, "c", append(v, 0)); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		q := gauss()
		a, _ := heap.search(context.Background(), q, 10, nil, nil)
		b, _ := general.search(context.Background(), append(q, 0), 10, nil, nil)
		if len(a) != 10 || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("768 dimensions %v, the general pass %v", a, b)
		}
	}
	for _, want := range []int{0, n / 2, n - 1} {
		a, err1 := heap.search(context.Background(), vecs[want], 10, nil, nil)
		b, err2 := file.search(context.Background(), vecs[want], 10, nil, nil)
		if err1 != nil || err2 != nil || len(a) != 10 || a[0].doc != uint32(want) || a[0].sim < 0.98 || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("vector %d: heap %v (%v), file %v (%v)", want, a, err1, b, err2)
		}
		for k := 1; k < len(a); k++ {
			if a[k].sim > a[k-1].sim {
				t.Fatalf("vector %d: not by score: %v", want, a)
			}
		}
	}
}

// TestAVectorFileThatCannotBeMadeCostsMemoryNotVectors: when the vector
// file cannot be made (its folder is a file; its temporary name is taken
// by a folder), the index keeps the codes on the heap and finds what the
// heap index finds.
func TestAVectorFileThatCannotBeMadeCostsMemoryNotVectors(t *testing.T) {
	f := newVecFixture(t, 300)
	loaded := f.loadedRef(t)
	blocker := filepath.Join(t.TempDir(), "a file")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(f.file); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.file+".tmp", "taken"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, cache := range map[string]string{"folder is a file": filepath.Join(blocker, "recall"), "name taken": f.cache} {
		t.Run(name, func(t *testing.T) {
			var log bytes.Buffer
			y, _ := newTestIndex(t, Options{Store: f.st, CacheDir: cache, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			syncIndex(t, y)
			if fi := y.vecs.Load().idx.(*flatIndex); fi.file != nil || !strings.Contains(log.String(), "keeping the vectors in memory") {
				t.Fatalf("file %v; the log:\n%s", fi.file, log.String())
			}
			f.same(t, y, loaded)
		})
	}
}

// TestFlatCodesOnTheHeapBesideTheFile: an index with a vector file keeps
// the codes of its first slots on the heap too, as many as its heapMax
// holds, as it adds vectors and as it opens its file; its searches find
// exactly what an index without a file finds and what one that reads
// every code from its file finds, and read the file only past the heap's
// slots (all on the heap: not at all, its file closed under it).
func TestFlatCodesOnTheHeapBesideTheFile(t *testing.T) {
	// 3,000 vectors of 100 dimensions (the built-in embedder's): more
	// than a top 10's shortlist (512), so the sign bits' pass chooses.
	// The made indexes are saved before they search, so they read from
	// the file, not from its write buffer.
	const n, dims = 3000, 100
	const rec = dims + 4
	r := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	vecs := make([][]float32, n)
	for i := range vecs {
		v := make([]float32, dims)
		for k := range v {
			v[k] = float32(r.NormFloat64())
		}
		normalize(v)
		vecs[i] = v
	}
	heap := newFlatIndex()
	budgets := []struct {
		name    string
		heapMax int
		onHeap  int // slots whose codes are on the heap
	}{
		{"file only", 0, 0},
		{"first 1000 on the heap", 1000*rec + rec - 1, 1000},
		{"all on the heap", vecHeapMax, n},
	}
	made := make([]*flatIndex, len(budgets))
	for b, bu := range budgets {
		made[b] = newFileFlatIndex(filepath.Join(dir, fmt.Sprint(b, ".vec")), [8]byte{1}, bu.heapMax)
	}
	for i, v := range vecs {
		var id uuid.UUID
		binary.LittleEndian.PutUint32(id[:], uint32(i))
		for _, idx := range append([]*flatIndex{heap}, made...) {
			if err := idx.add(uint32(i), id, fmt.Sprint("c", i%3), v); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The same files opened again, as a start opens them.
	opened := make([]*flatIndex, len(budgets))
	for b, bu := range budgets {
		if err := made[b].save(""); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprint(b, ".vec"))
		file, err := openVecFile(path, [8]byte{1})
		if err != nil {
			t.Fatal(err)
		}
		idx := newFileFlatIndex(path, [8]byte{1}, bu.heapMax)
		idx.dim, idx.words, idx.file = file.dims, (file.dims+63)/64, file
		idx.reserveCodes(min(file.n, idx.heapMax/(file.dims+4)), file.dims)
		if err := file.scan(func(slot int, _ uuid.UUID, stored []byte) {
			idx.addSlot(uint32(slot), fmt.Sprint("c", slot%3), stored)
		}); err != nil {
			t.Fatal(err)
		}
		opened[b] = idx
		t.Cleanup(func() { idx.close() })
	}
	for b, bu := range budgets {
		for _, idx := range []*flatIndex{made[b], opened[b]} {
			if len(idx.scale) != bu.onHeap || len(idx.codes) != bu.onHeap*dims {
				t.Fatalf("%s: %d scales and %d codes on the heap, want %d slots", bu.name, len(idx.scale), len(idx.codes), bu.onHeap)
			}
			if bu.heapMax < vecHeapMax && cap(idx.codes)+4*cap(idx.scale) > bu.heapMax {
				t.Fatalf("%s: %d bytes reserved on the heap, past its %d", bu.name, cap(idx.codes)+4*cap(idx.scale), bu.heapMax)
			}
		}
	}
	queries := [][]float32{vecs[0], vecs[999], vecs[1000], vecs[n-1]}
	for range 16 {
		q := make([]float32, dims)
		for k := range q {
			q[k] = float32(r.NormFloat64())
		}
		queries = append(queries, q)
	}
	for qi, q := range queries {
		for _, channels := range [][]string{nil, {"c1"}} {
			want, err := heap.search(context.Background(), q, 10, channels, nil)
			if err != nil || len(want) != 10 {
				t.Fatalf("query %d: heap %v (%v)", qi, want, err)
			}
			if qi < 4 && channels == nil && (want[0].doc != uint32([]int{0, 999, 1000, n - 1}[qi]) || want[0].sim < 0.98) {
				t.Fatalf("query %d: the vector asked for is not first: %v", qi, want)
			}
			for b, bu := range budgets {
				for _, idx := range []*flatIndex{made[b], opened[b]} {
					got, err := idx.search(context.Background(), q, 10, channels, nil)
					if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("query %d %v, %s: %v (%v), without a file %v", qi, channels, bu.name, got, err, want)
					}
				}
			}
		}
	}
	// With every code on the heap a search does not read the file: it
	// finds the same with the file's descriptor closed under it; one that
	// reads the file fails so.
	for b, bu := range budgets {
		idx := opened[b]
		if err := idx.file.f.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := idx.search(context.Background(), queries[4], 10, nil, nil)
		if bu.onHeap == n && (err != nil || len(got) != 10) {
			t.Fatalf("%s: %v (%v) with the file closed", bu.name, got, err)
		}
		if bu.onHeap < n && err == nil {
			t.Fatalf("%s: no error with the file closed", bu.name)
		}
		idx.file.f, _ = os.Open(os.DevNull) // for close
	}
}
