package recall

import (
	"encoding/binary"

	"github.com/google/uuid"
)

// idIndex finds a document by its message id: an open-addressing table of
// document numbers (each +1; 0 is an empty slot) placed by a hash of the
// id, the ids themselves read from the corpus's documents. Kept at most
// half full, it takes 8 bytes a document where a map from id to number
// takes about 40 (a million messages: 8 MiB, not 40). Documents are never
// removed from the corpus, so neither are slots. The caller holds the
// corpus's lock.
type idIndex struct {
	slots []uint32
	n     int
}

func idHash(id uuid.UUID) uint64 {
	// Version 7 ids begin with their time; the random half and a multiply
	// spread them.
	h := binary.LittleEndian.Uint64(id[8:]) ^ binary.LittleEndian.Uint64(id[:8])*0x9e3779b97f4a7c15
	return h ^ h>>29
}

// get returns the document of id.
func (x *idIndex) get(docs []docMeta, id uuid.UUID) (uint32, bool) {
	if x.n == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	for i := idHash(id) & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return 0, false
		}
		if docs[s-1].id == id {
			return s - 1, true
		}
	}
}

// put adds document doc (whose id docs holds, and which is not in yet).
func (x *idIndex) put(docs []docMeta, doc uint32) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow(docs, max(2*len(x.slots), 1024))
	}
	x.place(docs, doc)
	x.n++
}

// reserve makes room for n documents in all.
func (x *idIndex) reserve(docs []docMeta, n int) {
	size := 1024
	for size < 2*n {
		size *= 2
	}
	if size > len(x.slots) {
		x.grow(docs, size)
	}
}

func (x *idIndex) place(docs []docMeta, doc uint32) {
	mask := uint64(len(x.slots) - 1)
	i := idHash(docs[doc].id) & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = doc + 1
}

func (x *idIndex) grow(docs []docMeta, size int) {
	old := x.slots
	x.slots = make([]uint32, size)
	for _, s := range old {
		if s != 0 {
			x.place(docs, s-1)
		}
	}
}
