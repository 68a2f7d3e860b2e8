package recall

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/cyan-agent/cyan/notation"
)

// Tokenize splits text into index terms: lower-cased, width-folded words
// of letters and digits (English stop words dropped, an irregular verb's
// past form taken to its base — "went" → "go", "bought" → "buy" — and
// the Snowball stemmer applied), and, for Chinese, Japanese and Korean
// runs, which have no spaces, every character bigram (a lone character
// stands for itself). The same function indexes and queries, so both
// sides agree: "What did she buy?" finds "I bought…".
func Tokenize(text string) []string { return tokenize(text, stem, irregular) }

// tokenize is Tokenize with its stemmer and its table of irregular verbs
// (nil: none, the tokenizer of the release before them).
func tokenize(text string, stem func(string) string, irregular map[string]string) []string {
	var out []string
	var word []rune
	var cjk []rune
	flushWord := func() {
		if len(word) == 0 {
			return
		}
		w := string(word)
		word = word[:0]
		if len(w) > 64 || stopWords[w] {
			return
		}
		if l, ok := irregular[w]; ok {
			if stopWords[l] {
				return
			}
			w = l
		}
		out = append(out, stem(w))
	}
	flushCJK := func() {
		switch len(cjk) {
		case 0:
			return
		case 1:
			out = append(out, string(cjk))
		default:
			for i := 0; i+1 < len(cjk); i++ {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range text {
		r = notation.FoldWidth(r)
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			flushCJK()
			word = append(word, unicode.ToLower(r))
		case r == '\'' || r == '’':
			// "caroline's" → "caroline": drop the possessive and contractions.
			flushCJK()
			flushWord()
			word = word[:0]
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	out = dropClitics(out)
	if strings.IndexByte(text, '-') >= 0 {
		out = append(out, compounds(text, stem)...)
	}
	return out
}

// compounds returns the joined forms of hyphenated words, so "de-stress"
// also matches "destress" and "e-mail" "email".
func compounds(text string, stem func(string) string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		f = strings.Trim(f, "-")
		if !strings.Contains(f, "-") {
			continue
		}
		j := strings.ToLower(strings.ReplaceAll(f, "-", ""))
		if len(j) <= 64 && !isCJK([]rune(j)[0]) {
			out = append(out, stem(j))
		}
	}
	return out
}

// dropClitics removes the "s", "t", "ll", "re", "ve", "d", "m" left by
// apostrophes ("it's", "don't").
func dropClitics(ts []string) []string {
	out := ts[:0]
	for _, t := range ts {
		switch t {
		case "s", "t", "ll", "re", "ve", "d", "m":
			continue
		}
		out = append(out, t)
	}
	return out
}

// isCJK reports runes written without spaces between words: Han,
// Hiragana, Katakana and Hangul.
func isCJK(r rune) bool {
	if r < 0x2E80 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) || r == 'ー'
}

// stem is the Snowball (Porter 2) English stemmer: "exams" and
// "examination" → "exam", "promote" and "promotions" → "promot",
// "memories" and "memory" → "memori". Measured under cross-validation on
// LoCoMo it lifts recall at every k over a light plural/-ing/-ed
// stripper (docs/memory.md). Short and non-ASCII words are left alone.
func stem(w string) string {
	if len(w) <= 3 || !ascii(w) {
		return w
	}
	return english.Stem(w, false)
}

// stemCache remembers stems: the Snowball stemmer costs about a
// microsecond a word, and a chat's words repeat. It forgets everything
// when full. Safe for concurrent use.
type stemCache struct {
	mu sync.Mutex
	m  map[string]string
	// regular leaves irregular verbs as they are: the tokenizer of the
	// release before them, which the LoCoMo report's "before" measures.
	regular bool
}

const stemCacheSize = 1 << 17

func (c *stemCache) stem(w string) string {
	if len(w) <= 3 || !ascii(w) {
		return w
	}
	c.mu.Lock()
	s, ok := c.m[w]
	c.mu.Unlock()
	if ok {
		return s
	}
	s = stem(w)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= stemCacheSize {
		c.m = make(map[string]string, 1024)
	}
	c.m[w] = s
	c.mu.Unlock()
	return s
}

// tokens is Tokenize with the cache.
func (c *stemCache) tokens(text string) []string {
	if c.regular {
		return tokenize(text, c.stem, nil)
	}
	return tokenize(text, c.stem, irregular)
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// stopWords are English function words that carry no topic.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but if then else of at by for with about against between
into through during before after above below to from up down in out on off over under again further once
here there when where why how all any both each few more most other some such no nor not only own same so
than too very can will just don should now i me my myself we our ours ourselves you your yours yourself
yourselves he him his himself she her hers herself it its itself they them their theirs themselves what
which who whom this that these those am is are was were be been being have has had having do does did
doing would could ought im youre hes shes its were theyre ive youve weve theyve id youd hed shed wed
theyd ill youll hell shell well theyll isnt arent wasnt werent hasnt havent hadnt doesnt dont didnt wont
wouldnt shant shouldnt cant cannot couldnt mustnt lets thats whos whats heres theres whens wheres whys
hows as until while also yeah yes oh ok okay really`) {
		m[w] = true
	}
	return m
}()
