package recall

import (
	"testing"

	"github.com/google/uuid"
)

// The id table finds every document it was given, across its growths, and
// no id it was not given.
func TestIDIndexFindsEveryDocument(t *testing.T) {
	var docs []docMeta
	var x idIndex
	for i := range 5000 {
		id, err := uuid.NewV7()
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, docMeta{id: id})
		x.put(docs, uint32(i))
	}
	if x.n != len(docs) || 2*x.n > len(x.slots) {
		t.Fatalf("%d ids in %d slots for %d documents", x.n, len(x.slots), len(docs))
	}
	for i, d := range docs {
		if got, ok := x.get(docs, d.id); !ok || got != uint32(i) {
			t.Fatalf("document %d: get = %d, %v", i, got, ok)
		}
	}
	for range 1000 {
		if d, ok := x.get(docs, uuid.New()); ok {
			t.Fatalf("an unknown id found document %d", d)
		}
	}
	var y idIndex
	y.reserve(docs, len(docs))
	size := len(y.slots)
	for i := range docs {
		y.put(docs, uint32(i))
	}
	if len(y.slots) != size {
		t.Errorf("reserved %d slots, grew to %d", size, len(y.slots))
	}
}

// A term's count is capped in the posting; the document's length is not.
func TestPostingCapsTheCountNotTheLength(t *testing.T) {
	l := newLexicon()
	terms := make([]string, 40)
	for i := range terms {
		terms[i] = "ha"
	}
	l.add(0, append(terms, "x"))
	p := l.posts[l.terms["ha"]][0]
	if p.doc() != 0 || p.tf() != maxTF || l.docLen.at(0) != 41 {
		t.Fatalf("posting doc %d tf %d, length %d", p.doc(), p.tf(), l.docLen.at(0))
	}
	if q := mkPosting(maxDocs-1, 3); q.doc() != maxDocs-1 || q.tf() != 3 {
		t.Fatalf("the last document's posting reads back as doc %d tf %d", q.doc(), q.tf())
	}
}
