package recall

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"unicode/utf8"
)

// Embedder turns texts into vectors.
type Embedder interface {
	// ID names the embedder and its settings. Vectors made under different
	// IDs are never mixed: changing it re-embeds everything.
	ID() string
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// HashEmbedder is the built-in embedder: training-free feature hashing of
// words, word character trigrams and CJK characters and bigrams into a
// fixed number of dimensions, L2-normalised. It needs no network and no
// model file, handles Chinese, Japanese and Korean as well as English, and
// embeds tens of thousands of messages a second. Where BM25 needs the exact
// term, its trigrams also match inflections and misspellings ("exam",
// "exams", "examination") — the part of a dense retriever a laptop can
// have for free. See docs/memory.md for the measurements that
// chose it.
type HashEmbedder struct {
	Dims int // 0: DefaultHashDims
}

// DefaultHashDims is the built-in embedder's dimension.
const DefaultHashDims = 256

// hashEmbedderVersion changes when the features change, so stored vectors
// of an older version are re-made.
const hashEmbedderVersion = 3 // 3: Tokenize's irregular verbs

func (h HashEmbedder) dims() int {
	if h.Dims <= 0 {
		return DefaultHashDims
	}
	return h.Dims
}

// ID implements Embedder.
func (h HashEmbedder) ID() string {
	return fmt.Sprintf("builtin:hash-v%d-%d", hashEmbedderVersion, h.dims())
}

// Embed implements Embedder.
func (h HashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.Vector(t)
	}
	return out, nil
}

// Feature weights of HashEmbedder.
const (
	wordWeight    = 1.0
	trigramWeight = 0.5 // shared among a word's trigrams
	cjkUniWeight  = 0.4
)

// Vector embeds one text.
func (h HashEmbedder) Vector(text string) []float32 {
	d := h.dims()
	v := make([]float32, d)
	add := func(feature string, w float64) {
		f := fnv.New64a()
		f.Write([]byte(feature))
		x := f.Sum64()
		i := int(x % uint64(d))
		if x>>63 == 1 {
			w = -w
		}
		v[i] += float32(w)
	}
	for _, t := range Tokenize(text) {
		add("w:"+t, wordWeight)
		if r, _ := utf8.DecodeRuneInString(t); isCJK(r) {
			for _, c := range t {
				add("c:"+string(c), cjkUniWeight)
			}
			continue
		}
		if len(t) < 4 {
			continue
		}
		padded := "^" + t + "$"
		n := len(padded) - 2
		for j := 0; j+3 <= len(padded); j++ {
			add("t:"+padded[j:j+3], trigramWeight/math.Sqrt(float64(n)))
		}
	}
	normalize(v)
	return v
}

func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

func dot(a, b []float32) float32 {
	var s float32
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	i := 0
	for ; i+4 <= n; i += 4 {
		s += a[i]*b[i] + a[i+1]*b[i+1] + a[i+2]*b[i+2] + a[i+3]*b[i+3]
	}
	for ; i < n; i++ {
		s += a[i] * b[i]
	}
	return s
}
