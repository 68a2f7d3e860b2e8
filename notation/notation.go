package notation

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The notation the model reads and writes (SPEC §2). Only the platform
// writes line prefixes; everything that comes from users, files, tools or
// memory goes through Escape first.
const (
	// Break in the model's output splits it into separate messages.
	Break = "@br"
	// Empty is the model's choice to say nothing.
	Empty = "<empty_reply>"
	// TimeLayout is the time in a rendered line: "^alice [2026-11-22 10:31]: hi".
	TimeLayout = "2006-01-02 15:04"
)

// lineMarker reports whether r, at the start of a line, could make the line
// read as platform notation: "^name:" / "^system" lines, "#function" results
// and "# section" headers, their full-width and small look-alikes, and the
// escape character itself (so that escaping stays reversible).
func lineMarker(r rune) bool {
	switch r {
	case '^', '#', '\\', '＾', '＃', '﹟', 'ˆ':
		return true
	}
	return false
}

// lineBreak reports the runes that start a new line for a reader: \n, \r,
// vertical tab, form feed, NEL and the Unicode line and paragraph separators.
func lineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// ignorable reports runes a reader does not see at the start of a line:
// spaces and invisible format characters (zero-width space, BOM, bidi marks).
func ignorable(r rune) bool {
	return !lineBreak(r) && (unicode.IsSpace(r) || unicode.Is(unicode.Cf, r))
}

// Escape renders untrusted text so that it cannot forge a "^…" line, a
// "#…" line or section header, an "@br" or an "<empty_reply>" marker: a
// backslash goes before a marker that starts a line (after any spaces or
// invisible characters), inside "@br" ("@\br") and inside "<empty_reply>"
// ("<\empty_reply>"). Unescape(Escape(s)) == s for every s.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	lineStart := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case lineBreak(r):
			lineStart = true
		case lineStart && ignorable(r):
			// still at the visible start of the line
		case lineStart:
			lineStart = false
			if lineMarker(r) {
				b.WriteByte('\\')
			}
		}
		if n := inlineMarkerAt(s, i); n > 0 {
			b.WriteString(s[i : i+n]) // "@" or "<"
			b.WriteByte('\\')
			i += n
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

// Unescape undoes Escape, for showing stored or rendered text to a person.
func Unescape(s string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	lineStart := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case lineBreak(r):
			lineStart = true
		case lineStart && ignorable(r):
		case lineStart:
			lineStart = false
			if r == '\\' {
				if next, _ := utf8.DecodeRuneInString(s[i+1:]); i+1 < len(s) && lineMarker(next) {
					i++ // drop the escape; the marker follows
					continue
				}
			}
		}
		if n := escapedInlineAt(s, i); n > 0 {
			b.WriteString(s[i : i+n])
			i += n + 1 // skip one backslash
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	return strings.ContainsAny(s, "^#\\＾＃﹟ˆ@<")
}

// inlineMarkerAt returns the length of the "@" or "<" that starts an inline
// marker at s[i:] — the marker possibly already escaped with backslashes, so
// that escaping adds one more — or 0.
func inlineMarkerAt(s string, i int) int {
	if i >= len(s) || (s[i] != '@' && s[i] != '<') {
		return 0
	}
	rest := strings.TrimLeft(s[i+1:], "\\")
	switch {
	case s[i] == '<' && hasPrefixFold(rest, "empty_reply>"):
		return 1
	case s[i] == '@' && hasPrefixFold(rest, "br"):
		// Like splitBreaks: "@bravo" is a word, not a break.
		if r, _ := utf8.DecodeRuneInString(rest[2:]); len(rest) > 2 && BreakWordRune(r) {
			return 0
		}
		return 1
	}
	return 0
}

// escapedInlineAt is inlineMarkerAt for text that carries at least one
// escape backslash after the "@" or "<".
func escapedInlineAt(s string, i int) int {
	if i+1 >= len(s) || s[i+1] != '\\' {
		return 0
	}
	return inlineMarkerAt(s, i)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// reservedNames may not be used by a speaker: they belong to the platform.
var reservedNames = []string{"system", "assistant", "tool", "developer"}

// SpeakerName renders a speaker's name for a "^name" line. Line breaks,
// invisible characters and the notation's punctuation (^ # : [ ] @ \) are
// removed, spaces collapsed, the length capped at 48 runes; an empty name
// becomes "user". A name that would pose as the platform ("system", a
// "…-limit" name) or as the agent itself gets a "user-" prefix.
func SpeakerName(name, agent string) string {
	out := unmarked(CleanName(name))
	lower := strings.ToLower(out)
	for _, r := range reservedNames {
		if lower == r {
			return "user-" + out
		}
	}
	if strings.HasSuffix(lower, "-limit") || (agent != "" && strings.EqualFold(out, CleanName(agent))) {
		return "user-" + out
	}
	return out
}

// CleanName is SpeakerName without the reserved-name rule: the name with
// line breaks, invisible characters and the notation's punctuation
// removed, spaces collapsed, at most 48 runes, "user" when nothing is left.
// The platform uses it for its own names ("system", "cyan-limit").
func CleanName(name string) string {
	var b strings.Builder
	space := false
	n := 0
	for _, r := range name {
		switch {
		case unicode.IsSpace(r) || lineBreak(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || lineMarker(r) || strings.ContainsRune(":：[]@<>", r):
			continue
		}
		if n >= 48 {
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		n++
	}
	if b.Len() == 0 {
		return "user"
	}
	return b.String()
}

// UserLine renders what a speaker said: "^alice [2026-11-22 10:31]: text",
// the text escaped.
func UserLine(name, agent string, at time.Time, text string) string {
	return "^" + SpeakerName(name, agent) + " [" + at.Format(TimeLayout) + "]: " + Escape(text)
}

// OwnerMark follows the owner's name in a "^name" line and in the logs:
// "^晴 (owner) [2026-11-22 10:31]: text". The platform adds it only to a
// speaker it matched as the owner by id (or the local user), never by a
// name; SpeakerName takes brackets out of everyone else's name, so a
// stranger who calls themselves "晴 (owner)" shows as "^晴 owner".
const OwnerMark = " (owner)"

// OwnerName is the owner's name as a "^name" line shows it: SpeakerName
// with OwnerMark.
func OwnerName(name, agent string) string { return SpeakerName(name, agent) + OwnerMark }

// OwnerLine is UserLine for the owner: "^晴 (owner) [time]: text".
func OwnerLine(name, agent string, at time.Time, text string) string {
	return "^" + OwnerName(name, agent) + " [" + at.Format(TimeLayout) + "]: " + Escape(text)
}

// unmarked takes the brackets out of a speaker's name ("晴 (owner)",
// "晴（ＯＷＮＥＲ）", "晴 (оwner)" with a Cyrillic о, "Bob (work)"), so no
// one but the owner carries OwnerMark or anything that looks like it.
func unmarked(name string) string {
	if !strings.ContainsFunc(name, func(r rune) bool { return ownerBracket(FoldWidth(r)) }) {
		return name
	}
	out := strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if ownerBracket(FoldWidth(r)) {
			return ' '
		}
		return r
	}, name)), " ")
	if out == "" {
		return "user"
	}
	return out
}

// ownerBracket reports whether r is a bracket a name could wrap the mark in.
func ownerBracket(r rune) bool {
	switch r {
	case '(', ')', '{', '}', '﹙', '﹚', '⁽', '⁾', '₍', '₎', '〔', '〕', '【', '】', '「', '」', '『', '』', '〈', '〉', '《', '》', '（', '）':
		return true
	}
	return false
}

// PlatformLine renders a line from the platform itself ("system", or a
// "<name>-limit" process); only the daemon calls it, with its own names.
func PlatformLine(name string, at time.Time, text string) string {
	return "^" + name + " [" + at.Format(TimeLayout) + "]: " + Escape(text)
}

// AgentTime is the time mark that opens the agent's own earlier answers in
// the context: "[2026-11-22 10:31] ". The model is told never to write one;
// the output parser removes one it copies anyway.
func AgentTime(at time.Time) string { return "[" + at.Format(TimeLayout) + "] " }

// ToolLine renders a tool's result for the model: "#name result".
func ToolLine(name, result string) string {
	return "#" + ToolName(name) + " " + Escape(result)
}

// ToolName keeps a tool name to the characters tool names use (letters,
// digits, "_", "-", "."), so that a name the model made up cannot carry a
// line break or notation into the prompt.
func ToolName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r == '_' || r == '-' || r == '.' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "tool"
	}
	return b.String()
}

// BreakWordRune reports whether r, right after "@br", makes it part of a
// word ("@bravo", "@br_x") rather than a break: an ASCII letter, digit or
// underscore. Other letters do not: in "第一段@br第二段" the "@br" is a
// break, mid-line, in a group as in a private chat.
func BreakWordRune(r rune) bool { return r < utf8.RuneSelf && WordRune(r) }

// WordRune reports the runes that continue a word (a name, a mention).
func WordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
