package bridge

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limit is the most one message of a platform may hold. An adapter that
// has one implements Limited; the bridge splits what is longer before it
// sends, and splits again what the platform still refuses as too long.
type Limit struct {
	// Max is the most units one message holds.
	Max int
	// Units is one rune's units (nil: 1 a rune). Telegram counts UTF-16
	// code units, so a rune beyond the BMP counts 2.
	Units func(r rune) int
}

// Limited is an optional interface of an Adapter: its platform's message
// limit.
type Limited interface {
	Limit() Limit
}

// minPiece is the smallest limit a refused piece is split down to: below
// it the platform's "too long" is not about length.
const minPiece = 64

func (l Limit) units(r rune) int {
	if l.Units == nil {
		return 1
	}
	return l.Units(r)
}

// length is s in the limit's units.
func (l Limit) length(s string) int {
	if l.Units == nil {
		return utf8.RuneCountInString(s)
	}
	n := 0
	for _, r := range s {
		n += l.Units(r)
	}
	return n
}

// size is an outgoing message in the limit's units: its text, a mention
// as "@name".
func (l Limit) size(o Outgoing) int {
	n := 0
	for _, p := range o.Parts {
		switch p.Kind {
		case PartText:
			n += l.length(p.Text)
		case PartMention:
			n += l.length("@" + p.Text)
		}
	}
	return n
}

// split cuts o into messages of at most l.Max units each, in order: at the
// last paragraph break that leaves a piece at least half full, else the
// last line break or sentence end, else the last space, else between two
// runes. A reply part stays with the first piece; a mention is never cut.
// Whitespace at a cut is dropped. A message that fits is returned as is.
func split(o Outgoing, l Limit) []Outgoing {
	if l.Max <= 0 || l.size(o) <= l.Max {
		return []Outgoing{o}
	}
	var out []Outgoing
	var cur Outgoing
	used := 0
	flush := func() {
		trimPiece(&cur)
		if hasContent(cur) {
			out = append(out, cur)
		}
		cur, used = Outgoing{}, 0
	}
	for _, p := range o.Parts {
		switch p.Kind {
		case PartReply:
			cur.Parts = append(cur.Parts, p)
		case PartMention:
			n := l.length("@" + p.Text)
			if used+n > l.Max && used > 0 {
				flush()
			}
			cur.Parts = append(cur.Parts, p)
			used += n
		case PartText:
			text := p.Text
			for text != "" {
				room := l.Max - used
				if l.length(text) <= room {
					cur.Parts = append(cur.Parts, OutPart{Kind: PartText, Text: text})
					used += l.length(text)
					break
				}
				cut := cutAt(text, room, l, used == 0)
				if cut == 0 {
					flush() // nothing fits beside what the piece holds: start a new one
					continue
				}
				cur.Parts = append(cur.Parts, OutPart{Kind: PartText, Text: text[:cut]})
				flush()
				text = strings.TrimLeftFunc(text[cut:], unicode.IsSpace)
			}
		}
	}
	flush()
	if len(out) == 0 {
		return []Outgoing{o}
	}
	return out
}

// cutAt is the byte offset at which to cut text so that its head fits in
// room units: the best boundary (see split). alone says the head would be
// the piece's only text, so it must cut somewhere rather than return 0.
func cutAt(text string, room int, l Limit, alone bool) int {
	fit := 0 // bytes of text that fit
	units := 0
	for i, r := range text {
		u := l.units(r)
		if units+u > room {
			break
		}
		units += u
		fit = i + utf8.RuneLen(r)
	}
	if fit == 0 {
		if !alone {
			return 0
		}
		_, size := utf8.DecodeRuneInString(text) // a rune wider than the limit: send it alone
		return size
	}
	head := text[:fit]
	half := len(head) / 2
	if !alone {
		half = 0 // beside earlier text any boundary beats a cut mid-word
	}
	if i := strings.LastIndex(head, "\n\n"); i > 0 && i >= half {
		return i
	}
	if i := lastSentenceEnd(head); i > 0 && i >= half {
		return i
	}
	if i := strings.LastIndexFunc(head, unicode.IsSpace); i > 0 && i >= half/2 {
		return i
	}
	if !alone {
		return 0
	}
	return fit
}

// lastSentenceEnd is the byte offset just after the last line break or
// sentence end (., !, ? followed by a space; 。！？… anywhere) in s, 0 when
// none.
func lastSentenceEnd(s string) int {
	best := 0
	for i, r := range s {
		end := i + utf8.RuneLen(r)
		switch r {
		case '\n', '。', '！', '？', '…', '；':
			best = end
		case '.', '!', '?', ';':
			if end < len(s) {
				if next, _ := utf8.DecodeRuneInString(s[end:]); unicode.IsSpace(next) {
					best = end
				}
			}
		}
	}
	return best
}

// trimPiece drops the whitespace at the start and end of a piece's text.
func trimPiece(o *Outgoing) {
	for i := range o.Parts {
		if o.Parts[i].Kind == PartText {
			o.Parts[i].Text = strings.TrimLeftFunc(o.Parts[i].Text, unicode.IsSpace)
			if o.Parts[i].Text != "" {
				break
			}
		} else if o.Parts[i].Kind == PartMention {
			break
		}
	}
	for i := len(o.Parts) - 1; i >= 0; i-- {
		if o.Parts[i].Kind == PartText {
			o.Parts[i].Text = strings.TrimRightFunc(o.Parts[i].Text, unicode.IsSpace)
			if o.Parts[i].Text != "" {
				break
			}
		} else if o.Parts[i].Kind == PartMention {
			break
		}
	}
	parts := o.Parts[:0]
	for _, p := range o.Parts {
		if p.Kind != PartText || p.Text != "" {
			parts = append(parts, p)
		}
	}
	o.Parts = parts
}

// hasContent reports whether o holds text or a mention.
func hasContent(o Outgoing) bool {
	for _, p := range o.Parts {
		if p.Kind == PartMention || (p.Kind == PartText && strings.TrimSpace(p.Text) != "") {
			return true
		}
	}
	return false
}
