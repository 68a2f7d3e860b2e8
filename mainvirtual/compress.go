package mainvirtual

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// Compressor turns one of the agent's own older messages into a short line
// (SPEC §2: model messages may be compressed, oldest first, once the
// context outgrows its budget). The daemon passes the compress prompt
// script (script.Library); main-virtual decides what to compress and keeps the
// result, so each message is compressed at most once.
type Compressor interface {
	// Compress returns the short line of text, which agent said in
	// channel, and the id of the trace of the call that made it ("" if none
	// is kept). The script library's Compress is one
	// (script.Library.Compress).
	Compress(ctx context.Context, channel, text, agent string) (short, traceID string, err error)
}

// compressedMark opens a compressed message in the context, so the model
// can tell a summary of what it said from what it said.
const compressedMark = "[compressed] "

// maxCompressedRunes bounds a compressed line, whatever the compressor
// returned.
const maxCompressedRunes = 400

// shortGuess is the token cost assumed for a message not yet compressed
// when deciding how far back the context can reach.
const shortGuess = 48

// ctxItem is a context message and what it costs.
type ctxItem struct {
	m            *store.Message
	full         int // tokens of the whole message, framing included
	compressible bool
	short        string // the compressed line, when there is one
	shortTokens  int
	cached       bool
	traceID      string
	inUse        bool // shown compressed in this packet
}

func (it *ctxItem) cost() int {
	if it.inUse {
		return it.shortTokens
	}
	return it.full
}

// minCost is the least the item can cost: compressed, or a guess of it.
func (it *ctxItem) minCost() int {
	switch {
	case !it.compressible:
		return it.full
	case it.short != "":
		return min(it.full, it.shortTokens)
	}
	return min(it.full, shortGuess+lineOverhead)
}

// cleanShort makes a compressor's answer one line of bounded length.
func cleanShort(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxCompressedRunes {
		r := []rune(s)
		s = string(r[:maxCompressedRunes-1]) + "…"
	}
	return s
}

// fit chooses the context messages: all of them when they fit the budget;
// otherwise it compresses the agent's older messages, oldest first (never
// a user message, never the newest mini model messages), reusing the
// forms kept from earlier turns and making at most perTurn new ones, and
// then drops the oldest messages that still do not fit. The incoming
// message, last, always stays. It returns the index of the first message
// kept and records what it did in ct.
func (a *assembler) fit(ctx context.Context, q turn.Query, items []ctxItem, mini int, ct *turn.ContextTrace) int {
	n := len(items)
	total := 0
	for _, it := range items {
		total += it.full
	}
	if total > ct.Budget && a.compressor != nil && a.compress.Enabled {
		a.markCompressible(items, mini)
	}
	// How far back the context can reach, were every candidate compressed.
	first, sum := n, 0
	for i := n - 1; i >= 0; i-- {
		c := items[i].minCost()
		if sum+c > ct.Budget && i < n-1 {
			break
		}
		sum += c
		first = i
	}
	for _, it := range items[:first] {
		ct.Dropped = append(ct.Dropped, turn.DroppedItem{ID: it.m.ID, Reason: "context budget"})
	}
	total = 0
	for _, it := range items[first:] {
		total += it.full
	}
	fresh, bounded := 0, false
	for i := first; i < n && total > ct.Budget; i++ {
		it := &items[i]
		if !it.compressible {
			continue
		}
		if it.short == "" {
			if fresh >= a.compress.PerTurn {
				bounded = true
				continue
			}
			fresh++
			if !a.compressOne(ctx, q, it, ct) {
				continue
			}
		}
		if it.shortTokens >= it.full {
			continue
		}
		it.inUse = true
		total -= it.full - it.shortTokens
		ct.Compressed = append(ct.Compressed, turn.CompressedItem{ID: it.m.ID, Tokens: it.full, CompressedTokens: it.shortTokens, Cached: it.cached, TraceID: it.traceID})
	}
	if bounded {
		ct.Note = joinNote(ct.Note, fmt.Sprintf("compression bound reached: at most %d new compressions per turn (agent.compress.per_turn); the rest waits for later turns", a.compress.PerTurn))
	}
	for total > ct.Budget && first < n-1 {
		it := &items[first]
		total -= it.cost()
		reason := "context budget"
		if len(ct.Compressed) > 0 || bounded {
			reason = "context budget, after compression"
		}
		ct.Dropped = append(ct.Dropped, turn.DroppedItem{ID: it.m.ID, Reason: reason})
		if it.inUse {
			ct.Compressed = ct.Compressed[1:] // the oldest compressed one is this
		}
		first++
	}
	return first
}

// markCompressible marks the agent's messages that may be compressed and
// fills in the compressed forms kept from earlier turns.
func (a *assembler) markCompressible(items []ctxItem, mini int) {
	var ids []string
	protected := 0
	for i := len(items) - 1; i >= 0; i-- {
		m := items[i].m
		if m.Role != store.RoleAssistant || m.Empty || m.Text == "" {
			continue
		}
		if protected < mini {
			protected++
			continue
		}
		if items[i].full-lineOverhead < a.compress.MinTokens {
			continue
		}
		items[i].compressible = true
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 {
		return
	}
	kept, err := a.store.CompressedOf(ids...)
	if err != nil {
		a.log.Warn("read compressed forms", "channel", items[0].m.Channel, "err", err)
		return
	}
	for i := range items {
		if c, ok := kept[items[i].m.ID]; ok && items[i].compressible {
			a.setShort(&items[i], c.Text)
			items[i].cached, items[i].traceID = true, c.TraceID
		}
	}
}

func (a *assembler) setShort(it *ctxItem, text string) {
	it.short = cleanShort(text)
	it.shortTokens = a.count.Count(compressedMark+it.short) + lineOverhead
}

// compressOne compresses one message now and keeps the result.
func (a *assembler) compressOne(ctx context.Context, q turn.Query, it *ctxItem, ct *turn.ContextTrace) bool {
	text, traceID, err := a.compressor.Compress(ctx, q.Channel, it.m.Text, a.persona().Name)
	if err == nil && strings.TrimSpace(text) == "" {
		err = fmt.Errorf("the compressed form is empty")
	}
	if err != nil {
		ct.Note = joinNote(ct.Note, fmt.Sprintf("compressing %s failed: %v", it.m.ID, err))
		a.log.Warn("compress a message", "channel", q.Channel, "id", it.m.ID, "err", err)
		it.compressible = false
		return false
	}
	a.setShort(it, text)
	it.traceID = traceID
	if err := a.store.PutCompressed(it.m.ID, store.Compressed{Text: it.short, Time: q.Now, TraceID: traceID}); err != nil {
		a.log.Warn("keep a compressed form", "channel", q.Channel, "id", it.m.ID, "err", err)
	}
	return true
}
