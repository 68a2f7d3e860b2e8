package tts

import (
	"strings"
	"unicode"
)

// What the voice does with a reply's *actions* (tts.actions).
const (
	// ActionsSkip leaves actions unsaid (the default).
	ActionsSkip = "skip"
	// ActionsSpeak reads them in the reply's voice, as part of the text.
	ActionsSpeak = "speak"
	// ActionsNarrate reads them as their own segments with the emotion
	// Narration, which the voice speaks with its second voice
	// (tts.narrator; GPT-SoVITS: refs.narration).
	ActionsNarrate = "narrate"
)

// Narration is the emotion of a narrated action's segment.
const Narration = "narration"

// How far an unfinished construct is held while the rest of it streams
// in, in runes; past it, the marks are taken for plain characters.
const (
	holdInline  = 300  // `code`, *action*, [link](target), <tag>
	holdComment = 4000 // <!-- comment -->
)

// piece is cleaned text; action marks an *action*'s words.
type piece struct {
	text   string
	action bool
}

// unmarker removes markup from streamed text before it is cut into
// sentences, so a full stop inside code never ends a spoken sentence and
// nothing of the markup is read aloud:
//
//	```fenced code```           dropped (held until the fence closes)
//	`inline code`               dropped
//	<!-- comment -->, <tag>     dropped
//	![alt](image)               dropped
//	[text](target)              text
//	**bold**, __bold__, ~~x~~   the words, without the marks
//	*action*                    an action piece (a single star, words inside)
//	# heading, > quote, - item  the line, without its mark
//
// A construct not finished at the end of what streamed so far is held
// until it is (or until it is too long to be one).
type unmarker struct {
	held    []rune
	inFence bool
	midLine bool // the last rune given out was not a newline
}

// feed cleans s; final: the text ends here (everything held is given out).
func (m *unmarker) feed(s string, final bool) []piece {
	b := append(m.held, []rune(s)...)
	m.held = nil
	var out []piece
	var cur strings.Builder
	emit := func(text string, action bool) {
		if text == "" {
			return
		}
		if !action {
			cur.WriteString(text)
			return
		}
		if cur.Len() > 0 {
			out = append(out, piece{text: cur.String()})
			cur.Reset()
		}
		out = append(out, piece{text: text, action: true})
	}
	hold := func(i int) {
		m.held = append([]rune(nil), b[i:]...)
	}
	i := 0
loop:
	for i < len(b) {
		r := b[i]
		if m.inFence {
			if j := index(b, i, "```"); j >= 0 {
				m.inFence = false
				i = j + 3
				emit(" ", false)
				continue
			}
			if !final && len(b)-i >= 2 {
				hold(len(b) - 2) // perhaps the start of the closing fence
			}
			break
		}
		lineStart := !m.midLine
		if lineStart {
			// Block marks at a line's start: heading, quote, list item.
			j := i
			for j < len(b) && (b[j] == '#' || b[j] == '>') {
				j++
			}
			if j == i && j < len(b) && (b[j] == '-' || b[j] == '*' || b[j] == '+') {
				if j+1 == len(b) && !final {
					hold(i)
					break
				}
				if j+1 < len(b) && b[j+1] == ' ' {
					j++
				}
			}
			if j > i {
				if j == len(b) && !final {
					hold(i)
					break
				}
				i = j
				m.midLine = true
				continue
			}
		}
		switch {
		case r == '`':
			if has(b, i, "```") {
				m.inFence = true
				i += 3
				continue
			}
			if i+3 > len(b) && !final {
				hold(i)
				break loop
			}
			if j := indexLine(b, i+1, "`", holdInline); j >= 0 {
				emit(" ", false)
				i = j + 1
				continue
			} else if j == -2 && !final {
				hold(i)
				break loop
			}
		case r == '<':
			if has(b, i, "<!--") {
				if j := index(b, i+4, "-->"); j >= 0 {
					emit(" ", false)
					i = j + 3
					continue
				}
				if !final && len(b)-i < holdComment {
					hold(i)
					break loop
				}
				break loop // an unclosed comment: nothing after it is said
			}
			if !final && len(b)-i < 4 && isPrefix(b[i:], "<!--") {
				hold(i)
				break loop
			}
			if i+1 < len(b) && (isASCIILetter(b[i+1]) || b[i+1] == '/') {
				if j := indexLine(b, i+1, ">", holdInline); j >= 0 {
					emit(" ", false)
					i = j + 1
					continue
				} else if j == -2 && !final {
					hold(i)
					break loop
				}
			} else if i+1 == len(b) && !final {
				hold(i)
				break loop
			}
		case r == '!' && i+1 < len(b) && b[i+1] == '[' || r == '[' && (i == 0 || b[i-1] != '%'):
			img := r == '!'
			open := i
			if img {
				open++
			}
			text, end, state := link(b, open)
			switch {
			case state == linkDone:
				if !img {
					emit(text, false)
				} else {
					emit(" ", false)
				}
				i = end
				continue
			case state == linkMore && !final:
				hold(i)
				break loop
			}
		case r == '!' && i+1 == len(b) && !final:
			hold(i)
			break loop
		case r == '*' || r == '_' || r == '~':
			n := count(b, i, r)
			if n >= 2 {
				if i+n == len(b) && !final {
					hold(i)
					break loop
				}
				i += n // emphasis marks
				continue
			}
			if r != '*' {
				break // a single _ or ~ stays (snake_case, ^_^)
			}
			// A single star: an action when words follow and a star closes.
			if i+1 == len(b) && !final {
				hold(i)
				break loop
			}
			if i+1 < len(b) && b[i+1] == '*' {
				break
			}
			if i+1 < len(b) && !unicode.IsSpace(b[i+1]) && (unicode.IsLetter(b[i+1]) || unicode.IsDigit(b[i+1]) || unicode.IsPunct(b[i+1]) && b[i+1] != '*') {
				j := actionEnd(b, i+1, final)
				if j >= 0 {
					emit(string(b[i+1:j]), true)
					i = j + 1
					m.midLine = true
					continue
				}
				if j == -2 && !final {
					hold(i)
					break loop
				}
			}
			i++ // a lone star is no word
			continue
		}
		emit(string(r), false)
		m.midLine = r != '\n'
		i++
	}
	if final {
		m.held, m.inFence, m.midLine = nil, false, false
	}
	if cur.Len() > 0 {
		out = append(out, piece{text: cur.String()})
	}
	return out
}

const (
	linkNo = iota
	linkMore
	linkDone
)

// link reads "[text](target)" at b[i] ('['): the text, the index after it,
// and whether it is one (linkMore: it may be, once more text comes).
func link(b []rune, i int) (string, int, int) {
	j := indexLine(b, i+1, "]", holdInline)
	if j == -2 {
		return "", 0, linkMore
	}
	if j < 0 {
		return "", 0, linkNo
	}
	if j+1 == len(b) {
		return "", 0, linkMore
	}
	if b[j+1] != '(' {
		return "", 0, linkNo
	}
	k := indexLine(b, j+2, ")", holdInline)
	if k == -2 {
		return "", 0, linkMore
	}
	if k < 0 {
		return "", 0, linkNo
	}
	return string(b[i+1 : j]), k + 1, linkDone
}

// actionEnd finds the star that closes an action opened before b[from]:
// a single star after a non-space, on the same line. -2: not yet in b; -1:
// none.
func actionEnd(b []rune, from int, final bool) int {
	for j := from; j < len(b); j++ {
		switch {
		case b[j] == '\n' || j-from > holdInline:
			return -1
		case b[j] == '*' && !unicode.IsSpace(b[j-1]):
			if j+1 < len(b) && b[j+1] == '*' {
				return -1
			}
			if j+1 == len(b) && !final {
				return -2 // a second star may follow
			}
			return j
		}
	}
	return -2
}

// indexLine finds sub in b from i on the same line, within limit runes:
// its index, -1 when there is none, -2 when b ends first.
func indexLine(b []rune, i int, sub string, limit int) int {
	for j := i; j < len(b); j++ {
		if b[j] == '\n' || j-i > limit {
			return -1
		}
		if has(b, j, sub) {
			return j
		}
	}
	return -2
}

func index(b []rune, i int, sub string) int {
	for j := i; j+len([]rune(sub)) <= len(b); j++ {
		if has(b, j, sub) {
			return j
		}
	}
	return -1
}

func has(b []rune, i int, sub string) bool {
	for _, r := range sub {
		if i >= len(b) || b[i] != r {
			return false
		}
		i++
	}
	return true
}

// isPrefix: b is the start of sub.
func isPrefix(b []rune, sub string) bool {
	s := []rune(sub)
	if len(b) > len(s) {
		return false
	}
	for i := range b {
		if b[i] != s[i] {
			return false
		}
	}
	return true
}

func count(b []rune, i int, r rune) int {
	n := 0
	for i+n < len(b) && b[i+n] == r {
		n++
	}
	return n
}

func isASCIILetter(r rune) bool { return r < 0x80 && unicode.IsLetter(r) }

// Unmark is text with its markup removed, as the voice reads it before
// cutting it into sentences; actions follow mode (ActionsSkip when "").
func Unmark(text, actions string) string {
	var m unmarker
	var sb strings.Builder
	for _, p := range m.feed(text, true) {
		if p.action && actions != ActionsSpeak {
			sb.WriteString(" ")
			continue
		}
		sb.WriteString(p.text)
	}
	return sb.String()
}
