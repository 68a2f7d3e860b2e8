package mainvirtual

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/turn"
)

// Output is one model output read as outgoing chat messages.
type Output struct {
	// Parts are the messages to send, in order: the output split at "@br",
	// each part trimmed, empty parts dropped.
	Parts []string
	// Empty is set when the model chose to say nothing: the output was only
	// "<empty_reply>" (or nothing at all).
	Empty bool
	// Usage is the workspace-usage trailer the output carried (removed from
	// Parts), nil when it had none.
	Usage *turn.Usage
}

// SplitOutput reads a model output. "@br" splits it where it is not part of
// a longer word (so "foo@bravo.com" stays whole). "<empty_reply>" is removed
// wherever it appears; an output left with no text is an empty reply. The
// seed lets a trailing "@br" send an empty message; chat apps cannot send
// one, so empty parts are dropped. A part that starts by imitating the
// platform's prefix for the agent itself ("^Name [time]:") has it removed.
// A workspace-usage trailer is taken out into Usage.
func SplitOutput(raw, agent string) Output {
	text, usage := cutUsage(raw)
	text = strings.ReplaceAll(text, notation.Empty, "")
	var parts []string
	for _, p := range splitBreaks(text) {
		p = strings.TrimSpace(stripSelfPrefix(p, agent))
		if p != "" {
			parts = append(parts, p)
		}
	}
	return Output{Parts: parts, Empty: len(parts) == 0, Usage: usage}
}

// splitBreaks splits s at every "@br" that is not followed by an ASCII
// letter, digit or underscore (notation.BreakWordRune).
func splitBreaks(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], notation.Break)
		if j < 0 {
			break
		}
		at := i + j
		end := at + len(notation.Break)
		if end < len(s) {
			if r, _ := utf8.DecodeRuneInString(s[end:]); notation.BreakWordRune(r) {
				i = end
				continue
			}
		}
		out = append(out, s[start:at])
		start, i = end, end
	}
	return append(out, s[start:])
}

// stripSelfPrefix removes a leading "^Agent [time]:" or "^Agent:" that a
// model copied from the user lines onto its own answer, or the "[time] "
// mark its own earlier answers carry in the context.
func stripSelfPrefix(p, agent string) string {
	t := strings.TrimLeftFunc(p, unicode.IsSpace)
	if rest, ok := cutTimeMark(t); ok {
		return rest
	}
	if agent == "" || !strings.HasPrefix(t, "^") {
		return p
	}
	rest := t[1:]
	switch name := notation.SpeakerName(agent, ""); {
	case strings.HasPrefix(rest, agent):
		rest = rest[len(agent):]
	case strings.HasPrefix(rest, name):
		rest = rest[len(name):]
	default:
		return p
	}
	rest = strings.TrimLeft(rest, " ")
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 || end > len(" [2006-01-02 15:04]") {
			return p
		}
		rest = strings.TrimLeft(rest[end+1:], " ")
	}
	for _, colon := range []string{":", "："} {
		if strings.HasPrefix(rest, colon) {
			return rest[len(colon):]
		}
	}
	return p
}

// maxHeldRef bounds how much of a @last reference the stream filter holds
// back waiting for its end.
const maxHeldRef = 160

// endsLastRef reports the runes that end a @last reference in the live
// stream: white space and punctuation other than "_".
func endsLastRef(r rune) bool {
	return unicode.IsSpace(r) || (unicode.IsPunct(r) && r != '_') || unicode.IsSymbol(r)
}

// The usage trailer's tags, as the stream filter spots them.
const (
	usageOpen  = "<" + turn.UsageToolName
	usageClose = "</" + turn.UsageToolName + ">"
)

// streamFilter turns raw streamed fragments into StreamEvents: "@br" becomes
// a Break, "<empty_reply>" and the workspace-usage trailer disappear, and a
// fragment that may be the start of a marker is held back until the next
// fragment decides it. The
// authoritative messages still come from SplitOutput on the whole output.
type streamFilter struct {
	emit func(turn.StreamEvent) error
	// expand rewrites a held "@last_…" reference (nil: shown as written).
	expand func(string) string
	// onBreak is called at each "@br", once the text before it went out.
	onBreak   func()
	pending   string
	afterStop bool   // at the start of a message: leading spaces are dropped
	broke     bool   // a break is due before the next text
	space     string // trailing white space, held until text follows it
}

func newStreamFilter(emit func(turn.StreamEvent) error) *streamFilter {
	return &streamFilter{emit: emit, afterStop: true}
}

// write feeds a fragment.
func (f *streamFilter) write(frag string) error {
	f.pending += frag
	return f.drain(false)
}

// close flushes what is held back at the end of the output.
func (f *streamFilter) close() error { return f.drain(true) }

func (f *streamFilter) drain(final bool) error {
	s := f.pending
	var out strings.Builder
	flush := func() error {
		if out.Len() == 0 {
			return nil
		}
		text := out.String()
		out.Reset()
		if f.afterStop {
			text = strings.TrimLeftFunc(text, unicode.IsSpace)
			if text == "" {
				return nil
			}
			f.afterStop = false
		} else {
			text = f.space + text
		}
		// White space at the end is held: if a break or the end follows,
		// it is dropped, as SplitOutput trims the parts.
		trimmed := strings.TrimRightFunc(text, unicode.IsSpace)
		f.space = text[len(trimmed):]
		if text = trimmed; text == "" {
			return nil
		}
		if f.broke {
			f.broke = false
			if err := f.emit(turn.StreamEvent{Break: true}); err != nil {
				return err
			}
		}
		return f.emit(turn.StreamEvent{Text: text})
	}
	i := 0
	for i < len(s) {
		k := strings.IndexAny(s[i:], "@<")
		if k < 0 {
			out.WriteString(s[i:])
			i = len(s)
			break
		}
		out.WriteString(s[i : i+k])
		i += k
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, notation.Empty):
			i += len(notation.Empty)
		case f.expand != nil && strings.HasPrefix(rest, notation.LastPrefix):
			// Hold a @last reference until it ends, then show it expanded.
			end := strings.IndexFunc(rest[len(notation.LastPrefix):], endsLastRef)
			if end < 0 && !final && len(rest) < maxHeldRef {
				goto hold
			}
			if end < 0 {
				end = len(rest)
			} else {
				end += len(notation.LastPrefix)
			}
			out.WriteString(f.expand(rest[:end]))
			i += end
		case strings.HasPrefix(rest, usageOpen):
			// The usage trailer is a report, never text: drop it whole.
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				if !final {
					goto hold
				}
				i = len(s)
				continue
			}
			i += end + 1
			if strings.HasPrefix(s[i:], usageClose) {
				i += len(usageClose)
			}
		case strings.HasPrefix(rest, notation.Break):
			end := i + len(notation.Break)
			if end == len(s) && !final {
				goto hold // the next fragment may continue the word
			}
			if end < len(s) {
				if r, _ := utf8.DecodeRuneInString(s[end:]); notation.BreakWordRune(r) {
					out.WriteString(notation.Break)
					i = end
					continue
				}
			}
			if err := flush(); err != nil {
				return err
			}
			if f.onBreak != nil {
				f.onBreak()
			}
			if !f.afterStop {
				f.broke = true // sent before the next text, never at the end
			}
			f.afterStop, f.space = true, ""
			i = end
		case !final && (strings.HasPrefix(notation.Empty, rest) || strings.HasPrefix(notation.Break, rest) || strings.HasPrefix(usageOpen, rest) ||
			f.expand != nil && strings.HasPrefix(notation.LastPrefix, rest)):
			goto hold
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	f.pending = ""
	return flush()
hold:
	f.pending = s[i:]
	return flush()
}

// cutTimeMark removes a leading "[2006-01-02 15:04]" (and the space after
// it) from s.
func cutTimeMark(s string) (string, bool) {
	const n = len("[2006-01-02 15:04]")
	if len(s) < n || s[0] != '[' || s[n-1] != ']' {
		return s, false
	}
	if _, err := time.Parse(notation.TimeLayout, s[1:n-1]); err != nil {
		return s, false
	}
	return strings.TrimLeft(s[n:], " "), true
}
