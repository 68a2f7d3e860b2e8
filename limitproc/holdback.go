package limitproc

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/packets"
)

// Removed is what a forbidden pattern's match is replaced with.
const Removed = "[removed]"

// UnboundedHold is the holdback, in runes, for a forbidden pattern whose
// matches have no longest length ("sk-[a-z0-9]+"): text is released only
// once UnboundedHold runes follow it. A match that is still growing at
// the end of the received text holds everything from its start, up to
// MaxOpenMatch runes; a match longer than that is removed in pieces of
// MaxOpenMatch runes (its tail, once it no longer matches the pattern on
// its own, may go out).
const (
	UnboundedHold = 256
	MaxOpenMatch  = 4096
)

// Holdback is the limit chain's output stages — forbidden patterns and
// max_output_chars — on text as it is written, one part (message) at a
// time. Write takes the next piece of a part and returns what may go out
// now; End closes the part and returns what was still held. Text is
// released only when no forbidden pattern can still match across it: at
// most Hold() runes are held back (the longest match a pattern can make,
// or UnboundedHold). The limit on characters counts every part of the
// output; once it is reached the rest is dropped and Capped reports it.
// The one rune that would reach the limit is held too, until the part
// ends: it goes out if nothing follows, "…" does if more comes (emit).
//
// What a Holdback released is the whole of the policed output: the live
// stream shows it as it goes, and the stored message is the same text.
// A Holdback is for one model output and not safe for concurrent use.
type Holdback struct {
	res     []*regexp.Regexp
	holds   []int    // each pattern's holdback, runes
	prefix  []string // each pattern's literal prefix ("sk-"), "" for none
	hold    int      // runes
	max     int      // 0: no limit
	pending string
	tail    string // policed text held at the character limit (emit)
	sent    int    // runes released, all parts
	total   int    // runes written, all parts (the answer's own length)
	hits    int
	capped  bool
	parts   int // messages that may still go out, -1: no limit
}

// Holdback makes the output stages' holdback for one model output.
func (c *Chain) Holdback() *Holdback {
	h := &Holdback{parts: -1}
	for _, s := range c.stages {
		switch s := s.(type) {
		case *forbidden:
			h.res, h.holds, h.hold = s.res, s.holds, s.hold
			for _, re := range s.res {
				p, _ := re.LiteralPrefix()
				h.prefix = append(h.prefix, p)
			}
		case *outputLength:
			h.max = s.max
		}
	}
	return h
}

// Hold is how many runes the forbidden patterns keep back at most while a
// part is being written (0 without them); at the character limit one
// more is held (emit).
func (h *Holdback) Hold() int { return h.hold }

// Parts is how many messages may still go out (-1: no limit).
func (h *Holdback) Parts() int { return h.parts }

// Capped reports whether max_output_chars cut the output.
func (h *Holdback) Capped() bool { return h.capped }

// Write adds the next piece of the current part and returns the text that
// may go out now.
func (h *Holdback) Write(s string) string {
	h.total += utf8.RuneCountInString(s)
	if h.capped {
		return ""
	}
	h.pending += s
	return h.drain(false)
}

// End closes the current part and returns what it still held.
func (h *Holdback) End() string {
	if h.capped {
		h.pending, h.tail = "", ""
		return ""
	}
	return h.drain(true)
}

// drain releases what no pattern can still reach.
func (h *Holdback) drain(final bool) string {
	var out strings.Builder
	for h.pending != "" && !h.capped {
		safe := len(h.pending)
		if !final {
			safe = h.safe(h.pending)
		}
		start, end, ok := h.first(h.pending)
		if !ok || start >= safe {
			h.pending = h.release(&out, h.pending, safe)
			break
		}
		if !final && end == len(h.pending) && utf8.RuneCountInString(h.pending[start:end]) < MaxOpenMatch {
			// The match may still grow: hold it whole.
			h.pending = h.release(&out, h.pending, start)
			break
		}
		rest := h.release(&out, h.pending, start)
		h.hits++
		h.release(&out, Removed, len(Removed))
		if !h.capped {
			h.pending = rest[end-start:]
		}
	}
	if final {
		h.pending = ""
		h.flush(&out)
	}
	return out.String()
}

// safe is how much of s no pattern can still match across. A match that
// starts earlier than a pattern's holdback from the end is whole in s (and
// found by first); a later one can start only where the pattern's literal
// prefix ("sk-") is, or begins, so a pattern with one holds only from
// there, and one without holds its whole holdback.
func (h *Holdback) safe(s string) int {
	safe := len(s)
	for i := range h.res {
		from := runesBeforeLast(s, h.holds[i])
		p := h.prefix[i]
		if p == "" {
			safe = min(safe, from)
			continue
		}
		for j := from; j < len(s) && j < safe; j++ {
			if !utf8.RuneStart(s[j]) {
				continue
			}
			if rest := s[j:]; strings.HasPrefix(rest, p) || strings.HasPrefix(p, rest) {
				safe = j
				break
			}
		}
	}
	return safe
}

// first is the earliest non-empty match of any pattern (the first
// pattern's on a tie).
func (h *Holdback) first(s string) (start, end int, ok bool) {
	start = len(s) + 1
	for _, re := range h.res {
		for off := 0; off <= len(s); {
			loc := re.FindStringIndex(s[off:])
			if loc == nil {
				break
			}
			if loc[0] == loc[1] { // an empty match removes nothing
				_, n := utf8.DecodeRuneInString(s[off+loc[0]:])
				off += loc[0] + max(n, 1)
				continue
			}
			if off+loc[0] < start {
				start, end = off+loc[0], off+loc[1]
			}
			break
		}
	}
	return start, end, start <= len(s)
}

// release writes s[:i] as far as the character limit lets it and returns
// s[i:] ("" once the limit is reached).
func (h *Holdback) release(out *strings.Builder, s string, i int) string {
	h.emit(out, s[:i])
	if h.capped {
		return ""
	}
	return s[i:]
}

// emit passes policed text through the character limit. The stored copy
// is cut as packets.CutText cuts it: whole when it fits, else max-1 runes
// and "…". So while the part may go on, the limit's last rune is held
// (tail): it goes out at the part's end (flush) if nothing follows it,
// and "…" takes its place if more comes.
func (h *Holdback) emit(out *strings.Builder, s string) {
	if s == "" || h.capped {
		return
	}
	if h.max <= 0 {
		out.WriteString(s)
		h.sent += utf8.RuneCountInString(s)
		return
	}
	h.tail += s
	n := utf8.RuneCountInString(h.tail)
	if h.sent+n > h.max {
		out.WriteString(packets.CutText(h.tail, h.max-h.sent))
		h.sent = h.max
		h.capped = true
		h.pending, h.tail = "", ""
		return
	}
	keep := 0
	if h.sent+n == h.max {
		keep = 1
	}
	i := runeOffset(h.tail, n-keep)
	out.WriteString(h.tail[:i])
	h.sent += n - keep
	h.tail = h.tail[i:]
}

// flush releases the rune emit held at the limit: the part ended there.
func (h *Holdback) flush(out *strings.Builder) {
	if h.tail != "" && !h.capped {
		out.WriteString(h.tail)
		h.sent += utf8.RuneCountInString(h.tail)
	}
	h.tail = ""
}

// runeOffset is the byte offset of s after its first n runes (len(s) when
// it has fewer).
func runeOffset(s string, n int) int {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// Notices are what the output stages tell the agent about this output.
func (h *Holdback) Notices() []Notice {
	var ns []Notice
	if h.hits > 0 {
		ns = append(ns, Notice{Stage: "forbidden", Text: fmt.Sprintf("%d forbidden pattern match(es) were removed from your answer before it was sent; do not write such text.", h.hits)})
	}
	if h.capped {
		ns = append(ns, Notice{Stage: "output_length", Text: fmt.Sprintf("your answer had %d characters and was cut to %d; answer more briefly.", h.total, h.max)})
	}
	return ns
}

// runesBeforeLast is the byte offset in s before its last n runes (0 when
// s has n runes or fewer).
func runesBeforeLast(s string, n int) int {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}

// maxMatch is the longest match, in runes, a pattern can make; ok is false
// when it has none (a star, a plus, an open repeat).
func maxMatch(pattern string) (n int, ok bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, false
	}
	return maxLen(re.Simplify())
}

func maxLen(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune), true
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, true
	case syntax.OpCapture:
		return maxLen(re.Sub[0])
	case syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return 0, false
	case syntax.OpRepeat:
		if re.Max < 0 {
			return 0, false
		}
		n, ok := maxLen(re.Sub[0])
		return n * re.Max, ok
	case syntax.OpConcat:
		total := 0
		for _, s := range re.Sub {
			n, ok := maxLen(s)
			if !ok {
				return 0, false
			}
			total += n
		}
		return total, true
	case syntax.OpAlternate:
		longest := 0
		for _, s := range re.Sub {
			n, ok := maxLen(s)
			if !ok {
				return 0, false
			}
			longest = max(longest, n)
		}
		return longest, true
	}
	return 0, true // empty, anchors, word boundaries
}
