package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// An import writes the arrival entries of each of its transactions as
// one key, not one a message: arr\x00 last(8, big-endian) 'b', whose
// value lists the messages of arrivals last-n+1 … last in order. A
// message's own entry costs Badger a memtable insert, a write-ahead log
// record and its share of every compaction; at a million imported
// messages the batches took a sixth of the import's CPU time away.
//
// The key sorts where an entry of arrival last would (the extra byte
// only orders it after such a key, and none exists), so a reader that
// seeks to cursor+1 lands on the batch holding cursor+1 and skips the
// entries before it; the newest key still names the newest arrival.
//
// The value (arrivalBatch.encode):
//
//	uvarint n        entries, ≥ 1
//	uvarint c        channels, ≥ 1
//	c × (uvarint len, channel)
//	n × (id(16), uvarint channel index < c)
const arrivalBatchMark = 'b'

func arrivalBatchKey(last uint64) []byte { return append(arrivalKey(last), arrivalBatchMark) }

// arrivalValue is the value of a single entry of the arrival log.
func arrivalValue(id uuid.UUID, channel string) []byte {
	return append(id[:len(id):len(id)], channel...)
}

// arrivalEntry is one message of the arrival log.
type arrivalEntry struct {
	seq     uint64
	id      uuid.UUID
	channel string
}

// errArrival: an arrival-log key or value that is not one this store
// writes (a damaged database; salvage rebuilds the log).
var errArrival = errors.New("corrupt arrival entry")

// arrivals decodes one key and value of the arrival log, a single entry
// (arr\x00 seq → id(16) channel) or a batch, into its entries in order.
func arrivals(k, v []byte) ([]arrivalEntry, error) {
	if len(k) < len(prefixArrival)+8 {
		return nil, fmt.Errorf("%w: key %x", errArrival, k)
	}
	seq := binary.BigEndian.Uint64(k[len(prefixArrival):])
	switch len(k) - len(prefixArrival) {
	case 8:
		if len(v) < 16 {
			return nil, fmt.Errorf("%w %d", errArrival, seq)
		}
		return []arrivalEntry{{seq: seq, id: uuid.UUID(v[:16]), channel: string(v[16:])}}, nil
	case 9:
		if k[len(k)-1] != arrivalBatchMark {
			break
		}
		es, err := decodeArrivalBatch(seq, v)
		if err != nil {
			return nil, fmt.Errorf("%w: the batch ending at %d: %v", errArrival, seq, err)
		}
		return es, nil
	}
	return nil, fmt.Errorf("%w: key %x", errArrival, k)
}

func decodeArrivalBatch(last uint64, v []byte) ([]arrivalEntry, error) {
	next := func() (uint64, error) {
		x, n := binary.Uvarint(v)
		if n <= 0 {
			return 0, errors.New("truncated")
		}
		v = v[n:]
		return x, nil
	}
	n, err := next()
	if err != nil {
		return nil, err
	}
	// Each entry takes 17 bytes at least: a count that does not fit the
	// value is refused before anything is allocated for it.
	if n == 0 || n > last || n > uint64(len(v)/17) {
		return nil, fmt.Errorf("%d entries ending at %d in %d bytes", n, last, len(v))
	}
	c, err := next()
	if err != nil {
		return nil, err
	}
	if c == 0 || c > uint64(len(v)) {
		return nil, fmt.Errorf("%d channels in %d bytes", c, len(v))
	}
	chans := make([]string, c)
	for i := range chans {
		l, err := next()
		if err != nil {
			return nil, err
		}
		if l > uint64(len(v)) {
			return nil, fmt.Errorf("channel %d of %d bytes in %d", i, l, len(v))
		}
		chans[i], v = string(v[:l]), v[l:]
	}
	out := make([]arrivalEntry, n)
	for i := range out {
		if len(v) < 16 {
			return nil, errors.New("truncated")
		}
		out[i].id, v = uuid.UUID(v[:16]), v[16:]
		ci, err := next()
		if err != nil {
			return nil, err
		}
		if ci >= c {
			return nil, fmt.Errorf("channel %d of %d", ci, c)
		}
		out[i].seq, out[i].channel = last-n+1+uint64(i), chans[ci]
	}
	if len(v) != 0 {
		return nil, fmt.Errorf("%d bytes after the entries", len(v))
	}
	return out, nil
}

// arrivalBatch gathers the arrival entries of one transaction.
type arrivalBatch struct {
	at    map[string]int // channel → its index in names
	names []string
	ids   []uuid.UUID
	chans []int
}

// arrivalBatchMost bounds what one entry adds to an encoded batch
// (its id and channel index; the channel's name comes once, reserve
// counts it) and what the batch's own key and counts take: the putter
// reserves them in its transaction as it goes (see putter.putEncoded).
const (
	arrivalEntryMost = 16 + binary.MaxVarintLen32
	arrivalBatchMost = len(prefixArrival) + 9 + 12 + 2*binary.MaxVarintLen64 // with Badger's 12 bytes an entry
)

// reserve is the most that adding an entry of channel adds to the batch.
func (b *arrivalBatch) reserve(channel string) int64 {
	n := arrivalEntryMost
	if _, ok := b.at[channel]; !ok {
		n += binary.MaxVarintLen32 + len(channel)
	}
	if len(b.ids) == 0 {
		n += arrivalBatchMost
	}
	return int64(n)
}

func (b *arrivalBatch) add(id uuid.UUID, channel string) {
	i, ok := b.at[channel]
	if !ok {
		if b.at == nil {
			b.at = map[string]int{}
		}
		i = len(b.names)
		b.at[channel] = i
		b.names = append(b.names, channel)
	}
	b.ids = append(b.ids, id)
	b.chans = append(b.chans, i)
}

func (b *arrivalBatch) len() int { return len(b.ids) }

func (b *arrivalBatch) encode() []byte {
	out := make([]byte, 0, 2*binary.MaxVarintLen64+len(b.ids)*arrivalEntryMost+len(b.names)*(binary.MaxVarintLen32+32))
	out = binary.AppendUvarint(out, uint64(len(b.ids)))
	out = binary.AppendUvarint(out, uint64(len(b.names)))
	for _, c := range b.names {
		out = binary.AppendUvarint(out, uint64(len(c)))
		out = append(out, c...)
	}
	for i, id := range b.ids {
		out = append(out, id[:]...)
		out = binary.AppendUvarint(out, uint64(b.chans[i]))
	}
	return out
}

func (b *arrivalBatch) reset() {
	clear(b.at)
	b.names, b.ids, b.chans = b.names[:0], b.ids[:0], b.chans[:0]
}
