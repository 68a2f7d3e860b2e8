package lorebook

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// macroRE finds the card macros for the character and the user, in any
// case: {{char}}, <BOT>, <CHAR>, {{user}}, <USER>.
var macroRE = regexp.MustCompile(`(?i)\{\{char\}\}|<bot>|<char>|\{\{user\}\}|<user>`)

func hasMacro(s string) bool { return macroRE.MatchString(s) }

// Substitute replaces the character and user macros of s with the names.
func Substitute(s, char, user string) string {
	if !strings.ContainsAny(s, "{<") {
		return s
	}
	return macroRE.ReplaceAllStringFunc(s, func(m string) string {
		if strings.Contains(strings.ToLower(m), "user") {
			return user
		}
		return char
	})
}

// text is scanned text, kept in both cases so each key lowers only itself.
type text struct{ raw, lower string }

func newText(s string) text { return text{raw: s, lower: strings.ToLower(s)} }

// match reports whether key k is in t, under the entry's rules.
func (e *Entry) match(k key, t text, char, user string) bool {
	s := k.text
	if k.macro {
		s = Substitute(s, char, user)
	}
	if k.regex {
		re := k.re
		if k.macro {
			var err error
			if re, err = regexp.Compile(k.flags + s); err != nil {
				return false
			}
		}
		return re != nil && re.MatchString(t.raw)
	}
	hay := t.raw
	if !e.CaseSensitive {
		hay, s = t.lower, strings.ToLower(s)
	}
	if s == "" {
		return false
	}
	if e.WholeWords && !strings.ContainsFunc(s, unicode.IsSpace) {
		return wholeWord(hay, s)
	}
	return strings.Contains(hay, s)
}

// wholeWord reports an occurrence of w in s with no ASCII word character
// (letter, digit, '_') just before or after it, like JavaScript's
// (?:^|\W)w(?:$|\W).
func wholeWord(s, w string) bool {
	for off := 0; off <= len(s)-len(w); {
		i := strings.Index(s[off:], w)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(w)
		if (i == 0 || !asciiWord(s[i-1])) && (end == len(s) || !asciiWord(s[end])) {
			return true
		}
		off = i + 1
	}
	return false
}

func asciiWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// firstMatch returns the first of keys found in t, as the reason shows it:
// as written, its macros replaced.
func (e *Entry) firstMatch(keys []key, t text, char, user string) (string, bool) {
	for _, k := range keys {
		if e.match(k, t, char, user) {
			return Substitute(k.orig, char, user), true
		}
	}
	return "", false
}

// secondary checks the secondary keys against the entry's logic and says
// why it passed ("" when it did not).
func (e *Entry) secondary(t text, char, user string) (string, bool) {
	if !e.Selective || len(e.SecondaryKeys) == 0 {
		return "", true
	}
	var found, missing []string
	for _, k := range e.SecondaryKeys {
		if e.match(k, t, char, user) {
			found = append(found, Substitute(k.orig, char, user))
		} else {
			missing = append(missing, Substitute(k.orig, char, user))
		}
	}
	logic := " (" + e.Logic.String() + ")"
	switch e.Logic {
	case AndAny:
		if len(found) > 0 {
			return "secondary " + quote(found[0]) + logic, true
		}
	case NotAll:
		if len(missing) > 0 {
			return "secondary " + quote(missing[0]) + " absent" + logic, true
		}
	case NotAny:
		if len(found) == 0 {
			return "no secondary key" + logic, true
		}
	case AndAll:
		if len(missing) == 0 {
			return "every secondary key" + logic, true
		}
	}
	return "", false
}

// quote quotes a key for a reason, cut to 60 runes.
func quote(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "…"
	}
	return strconv.Quote(s)
}
