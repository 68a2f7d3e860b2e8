package store

import (
	"encoding/binary"

	"github.com/google/uuid"
)

// Key prefixes. Every key space of the database is registered here; a
// prefix ends in 0x00, which no channel name may contain.
const (
	prefixMessage    = "msg\x00" // msg\x00 channel \x00 id(16) → Message JSON
	prefixMsgID      = "mid\x00" // mid\x00 id(16) → channel
	prefixChannel    = "chn\x00" // chn\x00 channel → Channel JSON
	prefixTrace      = "trc\x00" // trc\x00 channel → last packet trace JSON
	prefixCompressed = "cmp\x00" // cmp\x00 id(16) → Compressed JSON
	prefixToolIndex  = "tix\x00" // tix\x00 channel \x00 id(16) → "" (the channel's tool results)
	// prefixArrival is the arrival log: every stored message in the order it
	// was written, whatever its time (imports write old times). Readers that
	// must see every message (indexers) keep a cursor in it.
	// An import writes one key a transaction (arrival_batch.go).
	prefixArrival = "arr\x00" // arr\x00 seq(8, big-endian) → id(16) channel; arr\x00 last(8) 'b' → a batch
	// prefixExternal makes imports idempotent: one message per external id
	// and channel.
	prefixExternal = "ext\x00" // ext\x00 channel \x00 external id → id(16)
	// prefixFormat records the store's format (format.go).
	prefixFormat = "fmt\x00"
	// prefixImportKey holds the answers of import batches sent with an
	// idempotency key, so a retried batch gets the first answer.
	prefixImportKey = "idk\x00" // idk\x00 key → ImportAnswer JSON
)

// Key spaces of other packages, which read and write them through DB. Each
// is registered here so that no two collide; the owning package documents
// the layout after the prefix.
const (
	// PrefixMemory is the workspace's key space (package memory):
	// mem\x00i\x00<id> items, mem\x00p\x00<id> plans, mem\x00T the turn
	// counter, mem\x00seq the id counter.
	PrefixMemory = "mem\x00"

	// PrefixObserver is the observers' key space (package observer):
	// obs\x00last\x00<name> the last time firing handled, obs\x00since\x00<name>
	// when the observer was first seen, obs\x00spent\x00<day>\x00<name> tokens
	// spent that day.
	PrefixObserver = "obs\x00"

	// PrefixApprovals holds the tool calls waiting for the owner's answer
	// (package tools): apr\x00 id → Approval JSON; and, for the approvals'
	// TTL after each answer, how it was answered: apr\x00 \x00 id → mark
	// JSON (written in the transaction that takes the approval).
	PrefixApprovals = "apr\x00"

	// PrefixGenerateTrace: the ring of generate traces (package generate).
	PrefixGenerateTrace = "gtr\x00" // gtr\x00 id(16) → generate.Trace JSON
	// PrefixGenerateSummary: their summaries, listed without reading the
	// whole traces.
	PrefixGenerateSummary = "gts\x00" // gts\x00 id(16) → generate.Summary JSON

	PrefixEvent        = "evt\x00" // events: records by channel, level and start
	PrefixEventID      = "evi\x00" // events: record id → its key
	PrefixEventFirst   = "evf\x00" // events: channel + first message id → record id
	PrefixEventPending = "evp\x00" // events: records still to title or to extract from
	PrefixTopicCursor  = "etc\x00" // events: per channel, the last message a record covers
	PrefixRollupMark   = "erm\x00" // events: per channel and level, the periods completed
	PrefixRollupDirty  = "erd\x00" // events: periods to summarise again
	PrefixRollupFail   = "erf\x00" // events: failed summaries waiting for a retry
	PrefixObject       = "obj\x00" // events: objects with info blocks
	PrefixObjectName   = "obn\x00" // events: object name or platform id → object id
	PrefixRelation     = "rel\x00" // events: relation lines between two objects
	PrefixTheory       = "thy\x00" // events: theory packets

	// PrefixRecall is the recall package's key space (embeddings, cursors).
	PrefixRecall = "rcl\x00"

	// PrefixBridge is the bridges' key space (package bridge): brg\x00
	// sent\x00<bridge>\x00<router key> → the platform id of a sent message
	// (for a message sent outside the outbox, an answer to a chat command
	// or an alert, the key is "own:" and its platform id),
	// and its reverse index brg\x00own\x00<bridge>\x00<platform id>\x00
	// <router key> → the channel it was sent in, or "" (written with it,
	// kept as long: 7 days), which finds the key of the bot's message a
	// recall names, and tells a reply to the bot's message, after a
	// restart too.
	PrefixBridge = "brg\x00"
	// PrefixJournal is the event log's (package journal): jnl\x00e id(8)
	// → Event JSON, jnl\x00r the ids reserved.
	PrefixJournal = "jnl\x00"
	// PrefixRouter is the router's (package router): subscriptions,
	// per-component outboxes, idempotency keys and the feed's cursor.
	PrefixRouter = "rtr\x00"
	// PrefixModelFacts is main-virtual's (package mainvirtual): what a
	// model's answers showed about it (its chat template opens its
	// reasoning, the window its server's error stated), by model:
	// mdl\x00 <llm client's Describe> \x00 <fact> → its value.
	PrefixModelFacts = "mdl\x00"
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

func toolIndexPrefix(channel string) []byte {
	k := make([]byte, 0, len(prefixToolIndex)+len(channel)+1)
	k = append(k, prefixToolIndex...)
	k = append(k, channel...)
	return append(k, 0)
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
