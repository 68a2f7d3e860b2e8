package glob

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Path reports whether a path or a tool name matches pattern: "*" and "?"
// do not match "/", "**" does.
func Path(pattern, name string) bool { return match(pattern, name, false) }

// Text reports whether text that is not a path (a shell command line)
// matches pattern: "*" and "?" match "/" too.
func Text(pattern, s string) bool { return match(pattern, s, true) }

// Channel reports whether a channel ("qq:group:123", "desktop") matches a
// channel pattern. It is Text: a channel has no separator the pattern
// must respect.
func Channel(pattern, channel string) bool { return match(pattern, channel, true) }

func match(pattern, name string, flat bool) bool {
	p, s := runes(pattern), runes(name)
	// cur[j]: pattern p[:i] matches s[:j].
	cur := make([]bool, len(s)+1)
	next := make([]bool, len(s)+1)
	cur[0] = true
	for i := 0; i < len(p); i++ {
		clear(next)
		switch {
		case p[i] == '*' && (flat || i+1 < len(p) && p[i+1] == '*'):
			any := false
			for j := 0; j <= len(s); j++ {
				any = any || cur[j]
				next[j] = any
			}
			if i+1 < len(p) && p[i+1] == '*' {
				i++ // the second star
			}
		case p[i] == '*':
			run := false
			for j := 0; j <= len(s); j++ {
				if j > 0 && s[j-1] == '/' {
					run = false
				}
				run = run || cur[j]
				next[j] = run
			}
		case p[i] == '?':
			for j := 1; j <= len(s); j++ {
				next[j] = cur[j-1] && (flat || s[j-1] != '/')
			}
		default:
			for j := 1; j <= len(s); j++ {
				next[j] = cur[j-1] && s[j-1] == p[i]
			}
		}
		cur, next = next, cur
	}
	return cur[len(s)]
}

// runes decodes s as []rune does, except that each byte that is not valid
// UTF-8 becomes its own value above the last code point rather than
// U+FFFD: two names that differ only in such bytes ("\xd1", "\xfd") stay
// different, and a literal pattern matches only the name it spells.
func runes(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			r = utf8.MaxRune + 1 + rune(s[i])
		}
		out = append(out, r)
		i += n
	}
	return out
}

// MaxPattern bounds a pattern's length.
const MaxPattern = 512

// Check says what is wrong with a pattern, or nil: empty, longer than
// MaxPattern, or holding a NUL or a line break.
func Check(p string) error {
	switch {
	case p == "":
		return errors.New("the pattern is empty")
	case len(p) > MaxPattern:
		return errors.New("the pattern is too long")
	case strings.ContainsAny(p, "\x00\n\r"):
		return errors.New("the pattern contains a NUL or line break")
	}
	return nil
}

// CheckChannel is Check for a channel pattern, whose message says what a
// channel pattern looks like.
func CheckChannel(p string) error {
	if err := Check(p); err != nil {
		return errors.New(err.Error() + `; name a channel or a pattern such as "desktop", "qq:private:*" or "*"`)
	}
	return nil
}
