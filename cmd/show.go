package cmd

import (
	"fmt"
	"strings"
	"unicode"
)

// showable is s as a terminal can be trusted to show it: every character
// that would change how the rest looks without being seen itself is
// written as an escape — the C0 and C1 controls and DEL (\n, \t, \r by
// name, the rest \u00XX: no escape sequence reaches the terminal),
// the bidi controls (U+202A–202E, U+2066–2069, U+200E/F, U+061C, which
// reorder what follows: "rm -rf ~ #\u202e/tmp" would read as a harmless
// command), the other invisible format characters (zero-width space and
// joiners, BOM, soft hyphen) and the line and paragraph separators. What an
// approval will run, and a name a card brought, are shown through it.
func showable(s string) string {
	if !strings.ContainsFunc(s, hiddenRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case hiddenRune(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hiddenRune reports a character showable escapes.
func hiddenRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' || r == '\uFFFD'
}
