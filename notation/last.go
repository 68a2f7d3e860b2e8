package notation

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// LastPrefix starts a reference to someone's previous message(s) in the
// model's output: "@last_alice" is alice's previous message,
// "@last_3_alice" her previous three, "@last_<agent>" the agent's own.
const LastPrefix = "@last_"

// Quote is a message a @last reference stands for.
type Quote struct {
	ID   string // the stored message's id (a bridge may render a reply to it)
	Name string // who said it, as the prompt shows the name
	Text string
}

// LastLookup returns the newest n messages of the speaker shown as name,
// oldest first; none when the name is unknown.
type LastLookup func(name string, n int) []Quote

// maxQuoteRunes bounds one quoted message in an expansion.
const maxQuoteRunes = 120

// ExpandLast is the escaper's outward step for @last references (SPEC §2):
// every "@last_<name>" or "@last_<n>_<name>" in the model's text is
// replaced by the quoted message(s) — 「alice: text」, several joined by
// " / " — so no person ever sees the raw marker. names are the speakers
// the reference may name (as the prompt shows them); the longest that
// follows the prefix wins, so names with spaces work. A reference to a name
// nobody has used becomes the bare name. It returns the text and the ids
// of the quoted messages, in order.
func ExpandLast(text string, names []string, lookup LastLookup) (string, []string) {
	if !strings.Contains(text, LastPrefix) {
		return text, nil
	}
	var b strings.Builder
	var ids []string
	i := 0
	for {
		j := strings.Index(text[i:], LastPrefix)
		if j < 0 {
			b.WriteString(text[i:])
			break
		}
		at := i + j
		b.WriteString(text[i:at])
		rest := text[at+len(LastPrefix):]
		n, rest2 := 1, rest
		if k := strings.IndexByte(rest, '_'); k > 0 {
			if v, err := strconv.Atoi(rest[:k]); err == nil && v > 0 {
				n, rest2 = min(v, 20), rest[k+1:]
			}
		}
		name := matchName(rest2, names)
		if name == "" { // no known name: take the word as written
			name = leadingWord(rest2)
		}
		if name == "" {
			b.WriteString(LastPrefix)
			i = at + len(LastPrefix)
			continue
		}
		quotes := lookup(name, n)
		if len(quotes) == 0 {
			b.WriteString(name)
		} else {
			b.WriteString("「")
			b.WriteString(quotes[0].Name)
			b.WriteString(": ")
			for k, q := range quotes {
				if k > 0 {
					b.WriteString(" / ")
				}
				b.WriteString(clipRunes(strings.Join(strings.Fields(q.Text), " "), maxQuoteRunes))
				ids = append(ids, q.ID)
			}
			b.WriteString("」")
		}
		i = at + len(LastPrefix) + (len(rest) - len(rest2)) + len(name)
	}
	return b.String(), ids
}

// matchName returns the longest of names that s starts with (case
// folded; the name as the list spells it, of the same length as the text
// it matched), where the name is not followed by more of a Latin word.
func matchName(s string, names []string) string {
	best := ""
	for _, n := range names {
		if n == "" || len(n) <= len(best) || len(s) < len(n) || !strings.EqualFold(s[:len(n)], n) {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(s[len(n):]); r < utf8.RuneSelf && WordRune(r) {
			continue // "@last_al" is not "@last_alice"'s al
		}
		best = n
	}
	return best
}

// leadingWord is the run of word runes s starts with.
func leadingWord(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool { return !WordRune(r) || unicode.IsSpace(r) })
	if end < 0 {
		return s
	}
	return s[:end]
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
