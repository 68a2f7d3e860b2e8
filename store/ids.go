package store

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"

	"github.com/google/uuid"
)

// idGen makes uuid v7 ids (RFC 9562) whose byte order is time order. Live
// ids are monotonic: within one millisecond, or when the clock steps back,
// the 12-bit rand_a field counts up from the last id (the RFC's "fixed-length
// dedicated counter" method), so a message stored later always sorts later.
type idGen struct {
	mu     sync.Mutex
	lastMS int64
	seq    uint16 // 12 bits
}

// seed makes the generator continue after an id already in the store.
func (g *idGen) seed(last uuid.UUID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lastMS = idMillis(last)
	g.seq = uint16(binary.BigEndian.Uint16(last[6:8]) & 0x0fff)
}

// seedAtLeast makes the generator continue after id when id is newer than
// what it would make next (restored messages carry their own ids).
func (g *idGen) seedAtLeast(id uuid.UUID) {
	g.mu.Lock()
	ms, seq := idMillis(id), uint16(binary.BigEndian.Uint16(id[6:8])&0x0fff)
	if ms > g.lastMS || ms == g.lastMS && seq > g.seq {
		g.lastMS, g.seq = ms, seq
	}
	g.mu.Unlock()
}

// next returns a monotonic id for a message stored now, at time t.
func (g *idGen) next(t time.Time) uuid.UUID {
	g.mu.Lock()
	ms := t.UnixMilli()
	if ms <= g.lastMS {
		ms = g.lastMS
		g.seq++
		if g.seq > 0x0fff { // counter overflow: borrow the next millisecond
			ms++
			g.seq = 0
		}
	} else {
		g.seq = randomSeq()
	}
	g.lastMS = ms
	seq := g.seq
	g.mu.Unlock()
	return makeV7(ms, seq)
}

// randomSeq starts a millisecond's counter in the lower half of its range,
// leaving room to count up.
func randomSeq() uint16 {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint16(b[:]) & 0x07ff
}

func makeV7(ms int64, seq uint16) uuid.UUID {
	var u uuid.UUID
	if ms < 0 {
		ms = 0
	}
	u[0] = byte(ms >> 40)
	u[1] = byte(ms >> 32)
	u[2] = byte(ms >> 24)
	u[3] = byte(ms >> 16)
	u[4] = byte(ms >> 8)
	u[5] = byte(ms)
	binary.BigEndian.PutUint16(u[6:8], 0x7000|seq&0x0fff)
	_, _ = rand.Read(u[8:])
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u
}

func idMillis(u uuid.UUID) int64 {
	return int64(u[0])<<40 | int64(u[1])<<32 | int64(u[2])<<24 | int64(u[3])<<16 | int64(u[4])<<8 | int64(u[5])
}

// historyIDs makes ids for messages that happened in the past: each id
// carries its message's own time, so history sorts among a channel's
// messages by when it was said. Within one batch, messages of the same
// millisecond count up in the 12-bit field and keep the batch's order;
// the 62 random bits keep ids of separate batches apart.
type historyIDs struct {
	lastMS int64
	seq    uint16
}

func (h *historyIDs) next(t time.Time) uuid.UUID {
	ms := t.UnixMilli()
	if ms == h.lastMS && h.seq < 0x0fff {
		h.seq++
	} else {
		h.lastMS, h.seq = ms, randomSeq()
	}
	return makeV7(ms, h.seq)
}

// IDAt returns the smallest message id of time t: every message stored at
// or after t sorts at or after it. Scans use it to start at a time.
func IDAt(t time.Time) string { return makeFloorV7(t.UnixMilli()).String() }

func makeFloorV7(ms int64) uuid.UUID {
	var u uuid.UUID
	if ms < 0 {
		ms = 0
	}
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i))
	}
	u[6] = 0x70
	u[8] = 0x80
	return u
}
