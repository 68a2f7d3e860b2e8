package store

import (
	"encoding/binary"

	"github.com/google/uuid"
)

// Key prefixes. Every key space of the database is registered here; a
// prefix ends in 0x00, which no channel name may contain.
const (
	prefixMessage = "msg\x00" // msg\x00 channel \x00 id(16) → Message JSON
	prefixMsgID   = "mid\x00" // mid\x00 id(16) → channel
	prefixChannel = "chn\x00" // chn\x00 channel → Channel JSON
	prefixTrace   = "trc\x00" // trc\x00 channel → last packet trace JSON
	// prefixArrival is the arrival log: every stored message in the order it
	// was written, whatever its time (imports write old times). Readers that
	// must see every message (indexers) keep a cursor in it.
	prefixArrival = "arr\x00" // arr\x00 seq(8, big-endian) → id(16)
	// prefixExternal makes imports idempotent: one message per external id
	// and channel.
	prefixExternal = "ext\x00" // ext\x00 channel \x00 external id → id(16)
	// PrefixRecall is the recall package's key space (embeddings, cursors).
	PrefixRecall = "rcl\x00"
)

func messagePrefix(channel string) []byte {
	k := make([]byte, 0, len(prefixMessage)+len(channel)+1)
	k = append(k, prefixMessage...)
	k = append(k, channel...)
	return append(k, 0)
}

func messageKey(channel string, id uuid.UUID) []byte {
	return append(messagePrefix(channel), id[:]...)
}

func idKey(id uuid.UUID) []byte {
	return append([]byte(prefixMsgID), id[:]...)
}

func arrivalKey(seq uint64) []byte {
	k := make([]byte, len(prefixArrival)+8)
	copy(k, prefixArrival)
	binary.BigEndian.PutUint64(k[len(prefixArrival):], seq)
	return k
}

func externalKey(channel, ext string) []byte {
	k := make([]byte, 0, len(prefixExternal)+len(channel)+1+len(ext))
	k = append(k, prefixExternal...)
	k = append(k, channel...)
	k = append(k, 0)
	return append(k, ext...)
}

func channelKey(channel string) []byte {
	return append([]byte(prefixChannel), channel...)
}

func traceKey(channel string) []byte {
	return append([]byte(prefixTrace), channel...)
}

// prefixEnd is the smallest key greater than every key starting with p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
