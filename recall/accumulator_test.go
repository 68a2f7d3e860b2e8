package recall

import "testing"

// TestSearchKeepsOneAccumulator checks that the accumulator prepare makes
// is the one every later search takes and gives back (not made again, nor
// left to the collector), and that an index grown past it gets a larger
// one that is kept in turn.
func TestSearchKeepsOneAccumulator(t *testing.T) {
	gen := newSynth(3)
	var stems stemCache
	l := newLexicon()
	add := func(n int) {
		for range n {
			l.add(uint32(l.docLen.n()), stems.tokens(gen.sentence()))
		}
	}
	add(500)
	l.prepare(l.docLen.n())
	a := l.idle.Load()
	if a == nil || len(a.e) < l.docLen.n() {
		t.Fatalf("prepare(%d) left no accumulator for the index", l.docLen.n())
	}
	for range 3 {
		first, _ := l.search(stems.tokens(gen.query()), 10, nil, nil, 1.2, 0.3, nil)
		if len(first) == 0 {
			t.Fatal("a query of the index's words found nothing")
		}
		if got := l.idle.Load(); got != a {
			t.Fatalf("after a search the idle accumulator is %p, not the prepared %p", got, a)
		}
	}
	l.prepare(l.docLen.n())
	if got := l.idle.Load(); got != a {
		t.Fatalf("prepare for as many documents made another accumulator (%p, not %p)", got, a)
	}
	for _, e := range a.e {
		if e != (accEntry{}) {
			t.Fatalf("a search left an entry %+v in the idle accumulator", e)
		}
	}
	add(len(a.e)) // past its room
	l.search(stems.tokens(gen.query()), 10, nil, nil, 1.2, 0.3, nil)
	b := l.idle.Load()
	if b == nil || b == a || len(b.e) < l.docLen.n() {
		t.Fatalf("after the index grew to %d documents the idle accumulator is %p (the old one %p)", l.docLen.n(), b, a)
	}
	l.prepare(l.docLen.n())
	if l.idle.Load() != b {
		t.Fatal("prepare replaced the accumulator a search had made for as many documents")
	}
}
