package events

import (
	"encoding/binary"
	"time"

	"github.com/cyan-agent/cyan/store"
	"github.com/google/uuid"
)

// Key layouts after the prefixes registered in store/keys.go. A channel name
// never contains 0x00, so it ends at the next 0x00.
//
//	evt\0 channel \0 level(1) start(8) id(16) → Event JSON
//	evi\0 id(16)                              → the evt key
//	evf\0 channel \0 first message id         → event id
//	evp\0 id(16)                              → "" (the event has Pending work)
//	etc\0 channel                             → cursor JSON
//	erm\0 channel \0 level(1)                 → mark JSON
//	erd\0 channel \0 level(1) start(8)        → "" (the period is dirty)
//	erf\0 channel \0 level(1) start(8)        → failure JSON
//	obj\0 id                                  → Object JSON
//	obn\0 "n:" lower(name) | "u:" platform id → object id
//	rel\0 a \0 b                              → Relation JSON
//	thy\0 id                                  → Theory JSON

func channelPrefix(prefix, channel string) []byte {
	k := make([]byte, 0, len(prefix)+len(channel)+1)
	k = append(k, prefix...)
	k = append(k, channel...)
	return append(k, 0)
}

func levelPrefix(channel string, level Level) []byte {
	return append(channelPrefix(store.PrefixEvent, channel), level.code())
}

// timeBytes orders times by their bytes (negative times too).
func timeBytes(t time.Time) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(t.UnixNano())^(1<<63))
	return b[:]
}

func timeOfBytes(b []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(b)^(1<<63)))
}

func eventKey(e *Event) []byte {
	id := uuid.MustParse(e.ID)
	k := append(levelPrefix(e.Source.Channel, e.Level), timeBytes(e.Start)...)
	return append(k, id[:]...)
}

func eventIDKey(id uuid.UUID) []byte { return append([]byte(store.PrefixEventID), id[:]...) }

func pendingKey(id uuid.UUID) []byte { return append([]byte(store.PrefixEventPending), id[:]...) }

func firstKey(channel, firstID string) []byte {
	return append(channelPrefix(store.PrefixEventFirst, channel), firstID...)
}

func cursorKey(channel string) []byte {
	return append([]byte(store.PrefixTopicCursor), channel...)
}

func markKey(channel string, level Level) []byte {
	return append(channelPrefix(store.PrefixRollupMark, channel), level.code())
}

func periodKey(prefix, channel string, level Level, start time.Time) []byte {
	return append(append(channelPrefix(prefix, channel), level.code()), timeBytes(start)...)
}

func objectKey(id string) []byte { return append([]byte(store.PrefixObject), id...) }

func nameKey(name string) []byte {
	return append([]byte(store.PrefixObjectName), "n:"+normName(name)...)
}

func userKey(userID string) []byte { return append([]byte(store.PrefixObjectName), "u:"+userID...) }

func relationKey(a, b string) []byte {
	k := append([]byte(store.PrefixRelation), a...)
	k = append(k, 0)
	return append(k, b...)
}

func theoryKey(id string) []byte { return append([]byte(store.PrefixTheory), id...) }

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

// idBefore is the id just before id in byte order, so an inclusive scan can
// start at id with store.Scan, which starts after the id it is given.
func idBefore(id string) string {
	u, err := uuid.Parse(id)
	if err != nil {
		return ""
	}
	for i := len(u) - 1; i >= 0; i-- {
		if u[i] > 0 {
			u[i]--
			return u.String()
		}
		u[i] = 0xff
	}
	return ""
}

// recordID is the id of a rollup record: the same period of the same
// channel always has the same id, so a summary written again replaces it.
func recordID(channel string, level Level, start time.Time) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte("cyan-record\x00"+channel+"\x00"+string(level)+"\x00"+start.UTC().Format(time.RFC3339Nano))).String()
}

// topicID is the id of a topic's record, made from where it starts.
func topicID(channel, firstMessageID string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte("cyan-topic\x00"+channel+"\x00"+firstMessageID)).String()
}
