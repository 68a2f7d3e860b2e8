package recall

import (
	"bytes"
	"slices"
	"sync"

	"github.com/cyan-agent/cyan/store"
	"github.com/google/uuid"
)

// docMeta is what the index keeps of one message in memory; its text stays
// in the store and is read only for results.
type docMeta struct {
	id uuid.UUID
	ch uint32
	t  int64 // unix milliseconds
}

// corpus is the in-memory side of the index: the documents, the lexical
// index and each channel's documents in message order (for windows and
// "message N" locations).
type corpus struct {
	mu    sync.RWMutex
	docs  []docMeta
	byID  map[uuid.UUID]uint32
	chans []string
	chIdx map[string]uint32
	order [][]uint32 // per channel, docs sorted by id
	lex   *lexicon
}

// docText is the text the lexical index reads of a message: the speaker,
// the text, and the month and year it was said in, so "the camping trip in
// June" or "what did we talk about in 2023" finds its messages (on LoCoMo
// this alone lifted recall@10 by two points).
func docText(m *store.Message) string {
	return indexText(m) + " " + m.Time.Format("January 2006")
}

func newCorpus() *corpus {
	return &corpus{byID: map[uuid.UUID]uint32{}, chIdx: map[string]uint32{}, lex: newLexicon()}
}

// indexable reports whether a message is recalled: what people and the
// agent said, not tool output, platform notes or silences.
func indexable(m *store.Message) bool {
	return (m.Role == store.RoleUser || m.Role == store.RoleAssistant) && !m.Empty && m.Text != ""
}

// indexText is what the index sees of a message: the speaker and the text,
// so "what did Caroline say about …" finds Caroline's lines.
func indexText(m *store.Message) string {
	if m.User == "" {
		return m.Text
	}
	return m.User + ": " + m.Text
}

// add indexes messages; it returns the doc numbers given (0xFFFFFFFF for
// messages that are skipped or already indexed).
func (c *corpus) add(msgs []*store.Message) []uint32 {
	terms := make([][]string, len(msgs))
	for i, m := range msgs {
		if indexable(m) {
			terms[i] = Tokenize(docText(m))
		}
	}
	out := make([]uint32, len(msgs))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range msgs {
		out[i] = noDoc
		if !indexable(m) {
			continue
		}
		id, err := uuid.Parse(m.ID)
		if err != nil {
			continue
		}
		if _, dup := c.byID[id]; dup {
			continue
		}
		ch, ok := c.chIdx[m.Channel]
		if !ok {
			ch = uint32(len(c.chans))
			c.chIdx[m.Channel] = ch
			c.chans = append(c.chans, m.Channel)
			c.order = append(c.order, nil)
		}
		doc := uint32(len(c.docs))
		c.docs = append(c.docs, docMeta{id: id, ch: ch, t: m.Time.UnixMilli()})
		c.byID[id] = doc
		c.lex.add(doc, terms[i])
		o := c.order[ch]
		if n := len(o); n == 0 || bytes.Compare(c.docs[o[n-1]].id[:], id[:]) < 0 {
			c.order[ch] = append(o, doc)
		} else {
			at, _ := slices.BinarySearchFunc(o, id, func(d uint32, id uuid.UUID) int { return bytes.Compare(c.docs[d].id[:], id[:]) })
			c.order[ch] = slices.Insert(o, at, doc)
		}
		out[i] = doc
	}
	return out
}

const noDoc = ^uint32(0)

// position returns a document's index in its channel's order. The caller
// holds mu.
func (c *corpus) position(doc uint32) int {
	d := c.docs[doc]
	o := c.order[d.ch]
	at, _ := slices.BinarySearchFunc(o, d.id, func(x uint32, id uuid.UUID) int { return bytes.Compare(c.docs[x].id[:], id[:]) })
	return at
}

func (c *corpus) size() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.docs)
}
