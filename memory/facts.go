package memory

import (
	"slices"
	"strings"
	"unicode"

	"github.com/cyan-agent/cyan/notation"
)

// The rules of this file decide when remember may keep one item for two
// texts. Nothing the agent is told to remember may be lost, so a false
// "the same" (a fact merged away) is worse than a false "different" (a
// redundant item, which active GC and compression handle later). Every
// term counts: one-letter words, digits, a digit between CJK characters
// (我家有4只猫), names, negations, and the order of the words ("bob owes
// alice" is not "alice owes bob").

// factTokens splits text into the tokens a fact is compared by, so that
// two texts compare equal only when they are the same fact written the same
// way up to case, character width, spacing and sentence punctuation:
//   - words of letters, digits and combining marks, lower-cased and folded
//     to half width; a '.', ',' or ':' between two digits stays inside the
//     number (3.4, 1,200, 9:30 are one token each, so 3.4 is not 3/4 and
//     9:30 is not 9 30);
//   - each CJK character on its own (Chinese and Japanese are written
//     without spaces);
//   - every other sign on its own: signs and operators (+ - > < =), currency
//     ($ ¥ €), units and degrees (° %), slashes, '#', emoji and other
//     symbols are part of what a fact says (UTC+8 is not UTC-8, C++ is not
//     C, 👍 is not 👎);
//   - sentence punctuation (sentencePunct), spaces, variation selectors and
//     other format characters separate tokens and count for nothing.
func factTokens(s string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) > 0 {
			out = append(out, string(word))
			word = word[:0]
		}
	}
	rs := []rune(s)
	for i := range rs {
		rs[i] = foldFact(rs[i])
	}
	for i, r := range rs {
		switch {
		case isCJK(r):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			word = append(word, unicode.ToLower(r))
		case (r == '.' || r == ',' || r == ':') && i > 0 && i+1 < len(rs) &&
			unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1]) && len(word) > 0:
			word = append(word, r)
		case unicode.IsSpace(r) || sentencePunct[r] || unicode.Is(unicode.Cf, r) ||
			unicode.Is(unicode.Variation_Selector, r) || unicode.IsControl(r):
			flush()
		default:
			flush()
			out = append(out, string(r))
		}
	}
	flush()
	return out
}

// sentencePunct is the punctuation that separates a fact's words without
// being part of it: full stops, commas, colons, question and exclamation
// marks, quotes, brackets, the em dash and ellipses, in Western and CJK
// forms. A hyphen-minus, an en dash, a slash or a tilde is not among them:
// it may be a sign, a fraction or a range.
var sentencePunct = func() map[rune]bool {
	m := map[rune]bool{}
	for _, r := range ".,;:!?\"'`()[]{}。，、；：！？…‥「」『』【】〈〉《》（）“”‘’—·・" {
		m[r] = true
	}
	return m
}()

// foldFact folds a character to the form a fact is compared in: full-width
// ASCII and the full-width currency signs to their half-width forms.
func foldFact(r rune) rune {
	switch r {
	case '￠':
		return '¢'
	case '￡':
		return '£'
	case '￥':
		return '¥'
	case '￦':
		return '₩'
	}
	return notation.FoldWidth(r)
}

// sentences splits text where a sentence ends: at 。！？；, a newline, and
// at . ! ? ; followed by a space or the end (so 3.5, 555-1234 and
// example.com stay whole).
func sentences(s string) []string {
	var out []string
	rs := []rune(s)
	start := 0
	for i, r := range rs {
		end := false
		switch r {
		case '。', '！', '？', '；', '\n':
			end = true
		case '.', '!', '?', ';':
			end = i+1 == len(rs) || unicode.IsSpace(rs[i+1])
		}
		if end {
			out = append(out, string(rs[start:i+1]))
			start = i + 1
		}
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}

// saysTheSame reports whether the held text already says text, so that
// remembering text again adds nothing: text has the same tokens, in the
// same order, as the whole of held or as one of its sentences (case,
// punctuation, spacing and character width aside). A paraphrase, a
// shorter form, one more word or one other digit is not the same.
func saysTheSame(held, text string) bool {
	want := factTokens(text)
	if len(want) == 0 {
		return false
	}
	if slices.Equal(factTokens(held), want) {
		return true
	}
	for _, s := range sentences(held) {
		if slices.Equal(factTokens(s), want) {
			return true
		}
	}
	return false
}

// itemSays reports whether an item already says text: its content, or
// the content active GC compressed (Original).
func itemSays(it *Item, text string) bool {
	return saysTheSame(it.Content, text) || (it.Original != "" && saysTheSame(it.Original, text))
}

// keepsTheWords reports whether wording — the remember step's rewording of
// text — may be kept in place of text: it says text's words in text's
// order and adds or removes nothing but
//   - pronouns, possessives, articles and particles (functionWords) and
//     sentence punctuation;
//   - a name in the place of a pronoun (he → bob, 我 → alice): up to three
//     words, each one the conversation or the agent's name already says
//     (known), with a possessive 's after it; never a number or a negation.
//
// So a swap ("bob owes alice" for "alice owes bob"), a negation added or
// dropped, a year added to a date or a name the conversation never spoke
// keeps the user's own text. A wording of the very same words is kept,
// even when all of them are function words ("he", "それ").
func keepsTheWords(text, wording string, known map[string]bool) bool {
	if ta := factTokens(text); len(ta) > 0 && slices.Equal(ta, factTokens(wording)) {
		return true
	}
	content := func(toks []string) (out []string, gaps map[int]bool) {
		gaps = map[int]bool{}
		for _, t := range toks {
			if functionWords[t] {
				if pronouns[t] {
					gaps[len(out)] = true
				}
				continue
			}
			out = append(out, t)
		}
		return out, gaps
	}
	a, gaps := content(factTokens(text))
	b, _ := content(factTokens(wording))
	if len(b) == 0 {
		return false
	}
	// Walk both in order; at a pronoun's place the wording may hold a name.
	var walk func(i, j int) bool
	walk = func(i, j int) bool {
		if gaps[i] {
			for k := j; k < len(b) && k-j < 3 && mayNameAPronoun(b[k], known); k++ {
				if walk2(a, b, i, k+1, walk) {
					return true
				}
			}
		}
		return walk2(a, b, i, j, walk)
	}
	return walk(0, 0)
}

// walk2 is keepsTheWords' step past a pronoun's place: the next words must
// match one for one, the next place tried by walk.
func walk2(a, b []string, i, j int, walk func(i, j int) bool) bool {
	if i == len(a) {
		return j == len(b)
	}
	if j == len(b) || a[i] != b[j] {
		return false
	}
	return walk(i+1, j+1)
}

// mayNameAPronoun reports whether a word of a rewording may stand where the
// text had a pronoun: a word the conversation already says, or the "s" of
// a possessive; never one with a digit or a negation.
func mayNameAPronoun(w string, known map[string]bool) bool {
	if negations[w] || strings.IndexFunc(w, unicode.IsDigit) >= 0 {
		return false
	}
	return w == "s" || known[w]
}

// knownWords are the tokens of the texts a rewording may take names from.
func knownWords(texts ...string) map[string]bool {
	out := map[string]bool{}
	for _, s := range texts {
		for _, t := range factTokens(s) {
			out[t] = true
		}
	}
	return out
}

// negations are words that turn a fact around; a rewording never brings
// one in for a pronoun.
var negations = map[string]bool{
	"not": true, "no": true, "never": true, "nobody": true, "none": true, "nothing": true,
	"don": true, "doesn": true, "didn": true, "isn": true, "aren": true, "wasn": true, "won": true, "t": true,
	"不": true, "没": true, "無": true, "无": true, "別": true, "别": true, "非": true,
}

// pronouns are the functionWords that stand for a person or thing, whose
// place a name may take in a rewording.
var pronouns = map[string]bool{
	"me": true, "my": true, "mine": true, "you": true, "your": true, "yours": true,
	"he": true, "him": true, "his": true, "she": true, "her": true, "hers": true,
	"it": true, "its": true, "we": true, "us": true, "our": true, "ours": true,
	"they": true, "them": true, "their": true, "theirs": true,
	"我": true, "你": true, "您": true, "他": true, "她": true, "它": true,
	"私": true, "僕": true, "俺": true, "彼": true,
}

// functionWords are the tokens a rewrite of a fact may leave out: English
// pronouns, possessives and articles of two letters or more (a one-letter
// word may be a name: "plan a"); Chinese and Japanese personal pronouns
// (one character each, as factTokens splits them), 的 and the Japanese
// particles は, が, を and の. Negations, numbers and names are never among
// them.
var functionWords = map[string]bool{
	"me": true, "my": true, "mine": true, "you": true, "your": true, "yours": true,
	"he": true, "him": true, "his": true, "she": true, "her": true, "hers": true,
	"it": true, "its": true, "we": true, "us": true, "our": true, "ours": true,
	"they": true, "them": true, "their": true, "theirs": true,
	"an": true, "the": true,
	"我": true, "你": true, "您": true, "他": true, "她": true, "它": true, "们": true, "的": true,
	"私": true, "僕": true, "俺": true, "彼": true,
	"は": true, "が": true, "を": true, "の": true,
}

// changesTheValue reports whether text gives a new value for what held
// says — the same subject and slot, another value — judged by the words,
// never by a model alone:
//   - they share a word that is not a value (the subject: "dentist");
//   - every word of held that text lacks is a value or a linking word (the
//     old value: "3"; "at"), and at least one is a value;
//   - text brings a value of its own ("4") and no negation.
//
// Values are words with a digit, CJK numerals, weekdays, months and the
// marks of a time (am, pm, 点, 時). So "dentist at 3 pm" → "the dentist
// moved to 4 pm" changes the value; "bob's number is 1" → "carol's number
// is 2" does not (bob is not a value), nor does "bob lives in paris" →
// "bob lives in lyon" (a place is not one the words can tell).
func changesTheValue(held, text string) bool {
	content := func(s string) map[string]bool {
		out := map[string]bool{}
		for _, t := range factTokens(s) {
			if !functionWords[t] {
				out[t] = true
			}
		}
		return out
	}
	o, n := content(held), content(text)
	subject, oldValue, newValue := false, false, false
	for t := range o {
		switch {
		case n[t] && !isValue(t) && !linkingWords[t]:
			subject = true
		case n[t]:
		case isValue(t):
			oldValue = true
		case !linkingWords[t]:
			return false
		}
	}
	for t := range n {
		if negations[t] {
			return false
		}
		if !o[t] && isValue(t) {
			newValue = true
		}
	}
	return subject && oldValue && newValue
}

// isValue reports whether a token is a value a fact may change: a number,
// a CJK numeral, a weekday, a month or a mark of the time of day.
func isValue(t string) bool {
	if strings.IndexFunc(t, unicode.IsDigit) >= 0 || valueWords[t] {
		return true
	}
	r := []rune(t)
	return len(r) == 1 && strings.ContainsRune("〇零一二三四五六七八九十百千万两半", r[0])
}

var valueWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`am pm noon midnight morning afternoon evening tonight today tomorrow yesterday
		monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun
		january february march april may june july august september october november december
		jan feb mar apr jun jul aug sep sept oct nov dec
		点 時 时 分 半 月 日 号 周 年 午 上 下 晚 早 今 明 昨 曜 火 水 木 金 土`) {
		m[w] = true
	}
	return m
}()

// linkingWords may leave a fact with its old value ("at 3 pm" → "to 4
// pm"): prepositions and the verb to be.
var linkingWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`at on in to from by for of is are was were be been now moved changed
		在 是 于 到 从 改 に で へ から まで です`) {
		m[w] = true
	}
	return m
}()
