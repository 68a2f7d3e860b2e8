package recall

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
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

// A corpus that reserved room for its documents fills it without copying
// its tables, and indexes them as one that did not.
func TestCorpusReserveKeepsItsTables(t *testing.T) {
	const n = 3000
	var msgs []*store.Message
	for i := range n {
		id, err := uuid.NewV7()
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, &store.Message{ID: id.String(), Channel: "home", Role: store.RoleUser, User: "amy",
			Text: fmt.Sprintf("message %d about lunch", i), Time: t0.Add(time.Duration(i) * time.Minute)})
	}
	reserved, grown := newCorpus(), newCorpus()
	reserved.reserve(n)
	docs, slots, lens := &reserved.docs[:1][0], len(reserved.byID.slots), &reserved.lex.docLen.short[:1][0]
	for i := 0; i < n; i += 500 {
		reserved.add(msgs[i : i+500])
		grown.add(msgs[i : i+500])
	}
	if &reserved.docs[0] != docs || len(reserved.byID.slots) != slots || &reserved.lex.docLen.short[0] != lens {
		t.Fatalf("the reserved tables were copied: %d documents, %d slots (reserved %d)", len(reserved.docs), len(reserved.byID.slots), slots)
	}
	// Term numbers follow a map's order; the speaker is compared by word.
	word := func(c *corpus, term uint32) string {
		for w, id := range c.lex.terms {
			if id == term {
				return w
			}
		}
		return ""
	}
	for i := range n {
		a, b := reserved.docs[i], grown.docs[i]
		if word(reserved, a.speaker) != word(grown, b.speaker) || word(reserved, a.speaker) == "" {
			t.Fatalf("document %d: speaker %q, want %q", i, word(reserved, a.speaker), word(grown, b.speaker))
		}
		a.speaker, b.speaker = 0, 0
		if a != b {
			t.Fatalf("document %d: %+v, want %+v", i, a, b)
		}
	}
	if !slices.Equal(reserved.lex.docLen.short, grown.lex.docLen.short) || len(reserved.lex.terms) != len(grown.lex.terms) {
		t.Fatal("the reserved corpus indexed the messages differently")
	}
	for i, m := range msgs {
		id := uuid.MustParse(m.ID)
		if d, ok := reserved.byID.get(reserved.docs, id); !ok || d != uint32(i) {
			t.Fatalf("message %d: document %d, %v", i, d, ok)
		}
	}
}
