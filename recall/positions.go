package recall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
	"github.com/google/uuid"
)

// The history numbering through the index. OpenHistory and HistoryRanges
// number a channel's messages by reading it from its start, which costs
// about a second at 100,000 messages. The index holds every channel's
// recalled messages in id order — the same messages, in the same order —
// so once it has read every stored message it numbers them by position
// at once, as its search results' locations do; until then (at start,
// right after an import) these fall back to reading the channel. The two
// differ only after a sender withdraws a message: the index keeps its
// place (its number stays taken, nothing of it is shown) until the next
// start, so the numbers given out meanwhile still open what they named.

// caughtUp reports whether the index holds every message stored so far.
func (x *Index) caughtUp() bool {
	return x.lexReady.Load() && x.lexCur.Load() >= x.st.LastArrival()
}

// HistoryRanges is the package's HistoryRanges, numbered by the index
// when it is caught up.
func (x *Index) HistoryRanges(ctx context.Context, channel string, runs []Run) ([][]Range, error) {
	if !x.caughtUp() {
		return HistoryRanges(ctx, x.st, channel, runs)
	}
	type chunk struct {
		run, from, n int
		id           string
	}
	var chunks []chunk
	c := x.c
	c.mu.RLock()
	if ch, ok := c.chIdx[channel]; ok {
		order := c.order[ch]
		at := func(id uuid.UUID, after bool) int {
			return sort.Search(len(order), func(i int) bool {
				cmp := bytes.Compare(c.docs[order[i]].id[:], id[:])
				return cmp > 0 || cmp == 0 && !after
			})
		}
		for i, r := range runs {
			first, err1 := uuid.Parse(r.First)
			last, err2 := uuid.Parse(r.Last)
			if err1 != nil || err2 != nil {
				continue
			}
			lo, hi := at(first, false), at(last, true)-1
			for p := lo; p <= hi; p += maxOpen {
				chunks = append(chunks, chunk{run: i, from: p + 1, n: min(maxOpen, hi-p+1), id: c.docs[order[p]].id.String()})
			}
		}
	}
	c.mu.RUnlock()
	out := make([][]Range, len(runs))
	for _, k := range chunks {
		m, err := x.st.Get(k.id) // its date, as a reading of the channel shows it
		if errors.Is(err, store.ErrNotFound) {
			return HistoryRanges(ctx, x.st, channel, runs)
		}
		if err != nil {
			return nil, err
		}
		r := Range{Ref: HistoryPrefix + channel + "/" + m.Time.Format("2006-01-02"), Messages: k.n, from: k.from}
		r.Location = r.location()
		out[k.run] = append(out[k.run], r)
	}
	return out, ctx.Err()
}

// OpenHistory is the package's OpenHistory, numbered by the index when it
// is caught up: message n is the n-th message of the channel in the
// index's order, as search results' locations and HistoryRanges number
// them. A message its sender withdrew after it was indexed keeps its number
// until the index is rebuilt (the next start) but is never shown.
func (x *Index) OpenHistory() func(ctx context.Context, r packets.Reader, ref, location string) (string, error) {
	return func(ctx context.Context, r packets.Reader, ref, location string) (string, error) {
		channel, from, to, err := parseHistoryRef(r, ref, location)
		if err != nil {
			return "", err
		}
		if !x.caughtUp() {
			return openHistory(ctx, x.st, ref, channel, "", 0, from, to)
		}
		var ids []uuid.UUID
		total := 0
		c := x.c
		c.mu.RLock()
		if ch, ok := c.chIdx[channel]; ok {
			order := c.order[ch]
			total = len(order)
			for p := from; p <= min(to, total); p++ {
				ids = append(ids, c.docs[order[p-1]].id)
			}
		}
		c.mu.RUnlock()
		if len(ids) == 0 {
			return "", fmt.Errorf("%%[%s] has %d messages; message %d is past the end", ref, total, from)
		}
		var b strings.Builder
		for i, id := range ids {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			m, err := x.st.Get(id.String())
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return "", err
			}
			if !indexable(m) {
				continue // withdrawn by its sender since it was indexed
			}
			writeHistoryLine(&b, from+i, m)
		}
		if b.Len() == 0 {
			return "", fmt.Errorf("%%[%s] %s: withdrawn by their senders", ref, location)
		}
		return strings.TrimRight(b.String(), "\n"), nil
	}
}

// location is the range's "message n ~ message m".
func (r Range) location() string {
	if r.Messages == 1 {
		return fmt.Sprintf("message %d", r.from)
	}
	return fmt.Sprintf("message %d ~ message %d", r.from, r.from+r.Messages-1)
}
