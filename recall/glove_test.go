package recall

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/store"
)

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

func TestGloveRelatedCloser(t *testing.T) {
	g := GloveEmbedder{}
	for _, c := range []struct{ a, near, far string }{
		{"painting", "art", "truck"},
		{"I love painting landscapes", "she makes art in her studio", "the truck broke down on the highway"},
		{"what is his job", "he works as a nurse at the hospital", "we had pizza for dinner"},
		{"my dog", "the puppy chewed my shoes", "the stock market fell"},
		{"she went hiking", "we climbed the mountain trail", "I filed my taxes"},
	} {
		a, n, f := g.Vector(c.a), g.Vector(c.near), g.Vector(c.far)
		if cn, cf := cosine(a, n), cosine(a, f); cn <= cf {
			t.Errorf("%q: %q at %.3f is not closer than %q at %.3f", c.a, c.near, cn, c.far, cf)
		}
	}
}

func TestGloveID(t *testing.T) {
	if id := (GloveEmbedder{}).ID(); id != "builtin:glove-100-v1" {
		t.Errorf("ID %q changed without a new version", id)
	}
	if (GloveEmbedder{}).ID() == (HashEmbedder{}).ID() {
		t.Error("the two built-in embedders share an ID")
	}
}

func TestGloveUnknownIsZero(t *testing.T) {
	g := GloveEmbedder{}
	for _, s := range []string{"", "   ", "the and of", "今天天气很好", "zqxjkvw qqqzzz", "!!! ???", "it's"} {
		v := g.Vector(s)
		if len(v) != 100 {
			t.Fatalf("%q: %d dimensions", s, len(v))
		}
		if !zeroVector(v) {
			t.Errorf("%q has no known word but a vector", s)
		}
	}
	// A known word among unknown ones counts, and the vector is unit length.
	v := g.Vector("zqxjkvw 今天 guitar")
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if math.Abs(n-1) > 1e-4 {
		t.Errorf("norm² %g, want 1", n)
	}
}

func TestGloveSameAsTokenizeWords(t *testing.T) {
	// Case, width and punctuation do not change a vector; stop words add
	// nothing.
	g := GloveEmbedder{}
	a := g.Vector("Guitar lessons, on Sunday!")
	b := g.Vector("ｇｕｉｔａｒ the LESSONS sunday")
	if c := cosine(a, b); c < 0.9999 {
		t.Errorf("cosine %g, want the same vector", c)
	}
}

func TestGloveEmbedBatch(t *testing.T) {
	g := GloveEmbedder{}
	texts := []string{"camping trip", "", "adopted a cat"}
	vs, err := g.Embed(context.Background(), texts)
	if err != nil || len(vs) != len(texts) {
		t.Fatalf("Embed: %d vectors, %v", len(vs), err)
	}
	for i, s := range texts {
		if c := cosine(vs[i], g.Vector(s)); !zeroVector(vs[i]) && c < 0.9999 {
			t.Errorf("%q: batch and single differ (cosine %g)", s, c)
		}
	}
	// Writing into one vector does not touch its neighbour.
	vs[0][len(vs[0])-1] = 42
	if vs[1][0] == 42 || len(vs[0]) != cap(vs[0]) {
		t.Error("batch vectors share memory")
	}
}

func TestGloveTable(t *testing.T) {
	tab, err := gloveTableOnce()
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.index) != gloveTableWords || tab.dims != 100 {
		t.Errorf("%d words of %d dimensions, want %d of 100", len(tab.index), tab.dims, gloveTableWords)
	}
	for _, w := range []string{"guitar", "painting", "hospital", "adoption"} {
		if _, ok := tab.index[w]; !ok {
			t.Errorf("%q is not in the table", w)
		}
	}
	// A changed byte fails the checksum; a wrong checksum is refused.
	bad := []byte(strings.Clone(string(gloveTableGz)))
	bad[len(bad)/2] ^= 1
	if _, err := readGloveTable(bad, gloveTableSHA256); err == nil {
		t.Error("a corrupt table loaded")
	}
	if _, err := readGloveTable(gloveTableGz, strings.Repeat("0", 64)); err == nil {
		t.Error("a table loaded against the wrong checksum")
	}
}

func FuzzGloveVector(f *testing.F) {
	for _, s := range []string{"", "hello world", "It's a Café — naïve résumé", "今天 guitar", "ｆｕｌｌ width", strings.Repeat("a", 200), "don't-stop e-mail", "\xff\xfe bad utf8"} {
		f.Add(s)
	}
	g := GloveEmbedder{}
	f.Fuzz(func(t *testing.T, s string) {
		v := g.Vector(s)
		if len(v) != 100 {
			t.Fatalf("%d dimensions", len(v))
		}
		var n float64
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("%q: non-finite value", s)
			}
			n += float64(x) * float64(x)
		}
		if n != 0 && math.Abs(n-1) > 1e-3 {
			t.Fatalf("%q: norm² %g", s, n)
		}
	})
}

func BenchmarkGloveEmbed(b *testing.B) {
	g := GloveEmbedder{}
	texts := []string{
		"Hey Caroline! Just got back from the pottery class, I made a little bowl for my mom.",
		"That's awesome, Melanie! How did the adoption meeting go last week?",
		"ok",
		"I've been thinking about going back to school for counseling, maybe next fall.",
	}
	if _, err := gloveTableOnce(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		g.Embed(context.Background(), texts[i%len(texts):i%len(texts)+1])
	}
}

func TestTheDefaultEmbedderIsGloVe(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fillHistory(t, st)
	x, err := New(Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if x.emb.ID() != (GloveEmbedder{}).ID() || x.vecOff || x.p.vecWeight != defaultParams.vecWeight || x.p.vecWeight <= 0 {
		t.Fatalf("embedder %s, vectors off %v, weight %g: want GloVe at the shipped weight %g", x.emb.ID(), x.vecOff, x.p.vecWeight, defaultParams.vecWeight)
	}
	syncIndex(t, x)
	// No word of the question is in the history: only meaning finds the
	// walk in the park.
	r, err := x.Search(context.Background(), Query{Prompt: "strolling outdoors among blossoms", Channel: "home"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Vector || len(r.Results) == 0 {
		t.Fatalf("vector %v, results %q: want a match by meaning", r.Vector, texts(r))
	}
	if top := r.Results[0].Text; !strings.Contains(top, "park") && !strings.Contains(top, "cherry trees") {
		t.Errorf("first result %q, want the walk in the park (all: %q)", top, texts(r))
	}
	// A question with no word the table knows searches by words alone.
	r, err = x.Search(context.Background(), Query{Prompt: "微积分", Channel: "home"})
	if err != nil || len(r.Results) == 0 || r.Vector {
		t.Errorf("%q: vector %v, results %q, %v: want words alone", "微积分", r.Vector, texts(r), err)
	}
}

func FuzzReadGloveTable(f *testing.F) {
	// Seeds: small valid tables of each code width, and the start of the
	// real one.
	for _, bits := range []int{4, 8} {
		f.Add(tinyGloveTable(bits))
	}
	f.Add(gloveTableGz[:512])
	f.Fuzz(func(t *testing.T, gz []byte) {
		sum := sha256.Sum256(gz)
		tab, err := readGloveTable(gz, hex.EncodeToString(sum[:]))
		if err != nil {
			return
		}
		v := make([]float32, tab.dims)
		for w := range tab.index {
			tab.vector(w, v)
		}
	})
}

// tinyGloveTable is a gzipped two-word table in glovegen's layout.
func tinyGloveTable(bits int) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("cyanglv1")
	for _, x := range []uint32{3, 2, 10, uint32(bits)} {
		binary.Write(&b, le, x)
	}
	binary.Write(&b, le, []float32{1, 0, 0})
	for i, w := range []string{"cat", "dog"} {
		b.WriteByte(byte(len(w)))
		b.WriteString(w)
		binary.Write(&b, le, uint32(i))
		binary.Write(&b, le, float32(0.1))
		if bits == 8 {
			b.Write([]byte{1, 2, 3})
		} else {
			b.Write([]byte{0x9a, 0x0b})
		}
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b.Bytes())
	zw.Close()
	return z.Bytes()
}

func TestReadTinyGloveTable(t *testing.T) {
	for _, bits := range []int{4, 8} {
		gz := tinyGloveTable(bits)
		sum := sha256.Sum256(gz)
		tab, err := readGloveTable(gz, hex.EncodeToString(sum[:]))
		if err != nil {
			t.Fatalf("%d bits: %v", bits, err)
		}
		want := []int8{1, 2, 3}
		if bits == 4 {
			want = []int8{0xa - 8, 0x9 - 8, 0xb - 8}
		}
		if got := tab.codes[3:6]; string(bytesOf(got)) != string(bytesOf(want)) {
			t.Errorf("%d bits: codes of dog %v, want %v", bits, got, want)
		}
		// The first dimension is the common component: removed.
		v := make([]float32, 3)
		if tab.vector("cat", v) != 1 || v[0] != 0 {
			t.Errorf("%d bits: cat %v, want no first dimension", bits, v)
		}
	}
}

func bytesOf(c []int8) []byte {
	b := make([]byte, len(c))
	for i, x := range c {
		b[i] = byte(x)
	}
	return b
}

func TestTheHashingEmbedderMakesNoVectors(t *testing.T) {
	// embed.provider: none is HashEmbedder at its default weight: words
	// alone, no vector made or kept.
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fillHistory(t, st)
	x, err := New(Options{Store: st, Embedder: HashEmbedder{}})
	if err != nil {
		t.Fatal(err)
	}
	syncIndex(t, x)
	if s := x.Status(); !x.vecOff || !s.VectorsOff || s.Vectors != 0 {
		t.Errorf("vectors off %v, status %+v: want none made", x.vecOff, s)
	}
}

func BenchmarkGloveTableLoad(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if _, err := readGloveTable(gloveTableGz, gloveTableSHA256); err != nil {
			b.Fatal(err)
		}
	}
}
