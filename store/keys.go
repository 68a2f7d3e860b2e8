package store

import "github.com/google/uuid"

// Key prefixes. Every key space of the database is registered here; a
// prefix ends in 0x00, which no channel name may contain.
const (
	prefixMessage = "msg\x00" // msg\x00 channel \x00 id(16) → Message JSON
	prefixMsgID   = "mid\x00" // mid\x00 id(16) → channel
	prefixChannel = "chn\x00" // chn\x00 channel → Channel JSON
	prefixTrace   = "trc\x00" // trc\x00 channel → last packet trace JSON
	// prefixCompressed holds the compressed form of model messages.
	prefixCompressed = "cmp\x00" // cmp\x00 id(16) → Compressed JSON
)

// Key spaces other packages keep through DB().
const (
	// PrefixGenerateTrace: the ring of generate traces (package generate).
	PrefixGenerateTrace = "gtr\x00" // gtr\x00 id(16) → generate.Trace JSON
	// PrefixGenerateSummary: their summaries, listed without reading the
	// whole traces.
	PrefixGenerateSummary = "gts\x00" // gts\x00 id(16) → generate.Summary JSON
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

func channelKey(channel string) []byte {
	return append([]byte(prefixChannel), channel...)
}

func compressedKey(id uuid.UUID) []byte {
	return append([]byte(prefixCompressed), id[:]...)
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
