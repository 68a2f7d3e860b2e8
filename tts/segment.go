package tts

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/packets"
)

// DefaultEmotion is the emotion of a segment nothing marks otherwise.
const DefaultEmotion = "neutral"

// Splitter cuts a reply into segments as it streams in, by rules alone, so
// voicing costs no extra model call. Markup is removed first (see
// unmarker: code, comments, images, link targets, emphasis marks; *actions*
// follow Actions). A segment then ends at a sentence end (。！？!?… a
// newline, a Latin full stop before a space), and a sentence whose scripts
// change (Chinese or Japanese beside a long enough Latin run) is cut where
// they change. A run with kana is Japanese, Han without kana Chinese (a
// short kana-less run after Japanese stays Japanese), Hangul Korean, Latin
// English. The emotion of a sentence is decided by EmotionOf (emoji and
// kaomoji, Words, punctuation; Emotion when nothing marks it).
//
// Never cut: times and numbers ("18:52", "19:33]", "3.14", "1,000"), a
// list's ordinal ("1. " at a line's start, after a colon, or inline before
// a word in lower case: "Steps: 1. open the lid 2. add…"), abbreviations (a
// table per language: "Mr.", "ca.", "Jan."; initialisms such as "U.S.",
// "p.m." and "Ph.D." unless a capital starts the next word), Windows and
// home paths ("C:\\Users\\me\\a.txt", "~/notes/a.md"), URLs and "%[...]"
// references (with their "Line n ~ Line m" or "message n ~ message m"
// range); those are held whole until they are complete. Speakable then
// reads a URL or a reference as a short word ("a link", 链接) and
// degrees as words ("-3.5 degrees Celsius").
//
// The first segment of a reply may also end at a clause break (，、,;：)
// once it holds FirstClause runes, so the voice can start sooner.
//
// Feed takes the text as it streams; it returns the segments completed so
// far. Flush ends the reply and returns what was held. A Splitter is not
// safe for concurrent use.
type Splitter struct {
	Emotion string
	// Words are the persona's emotion words, {emotion: [word, …]}.
	Words map[string][]string
	// Actions is what *actions* become: ActionsSkip (""), ActionsSpeak or
	// ActionsNarrate.
	Actions string
	// FirstClause is the length in runes from which the first segment may
	// end at a clause break; 0 means never.
	FirstClause int
	// MaxRunes cuts a sentence longer than this at a clause break or a
	// space (0: 160).
	MaxRunes int

	unmark  unmarker
	buf     []rune
	emitted int    // segments returned so far
	lastCJK string // the language of the last Chinese or Japanese run
}

// LanguageOf is the language of a text's first speakable run, as the
// splitter names it (en when it holds no letters).
func LanguageOf(text string) string {
	for _, seg := range Split(text) {
		return seg.Language
	}
	return "en"
}

// Split cuts a whole text into segments.
func Split(text string) []packets.Segment {
	s := &Splitter{}
	out := s.Feed(text)
	return append(out, s.Flush()...)
}

// Feed adds streamed text and returns the segments it completed.
func (s *Splitter) Feed(text string) []packets.Segment {
	return s.feed(s.unmark.feed(text, false), false)
}

func (s *Splitter) feed(pieces []piece, final bool) []packets.Segment {
	var out []packets.Segment
	for _, p := range pieces {
		if p.action {
			switch s.Actions {
			case ActionsSpeak:
			case ActionsNarrate:
				out = append(out, s.cut(true)...)
				for _, r := range s.runs(Speakable(p.text)) {
					out = append(out, packets.Segment{Emotion: Narration, Language: r.lang, Text: r.text})
					s.emitted++
				}
				continue
			default:
				s.buf = append(s.buf, ' ')
				continue
			}
		}
		s.buf = append(s.buf, []rune(p.text)...)
		out = append(out, s.cut(false)...)
	}
	if final {
		out = append(out, s.cut(true)...)
		s.buf = s.buf[:0]
	}
	return out
}

// cut takes the complete sentences out of the buffer (all of it when
// final).
func (s *Splitter) cut(final bool) []packets.Segment {
	var out []packets.Segment
	for {
		end := s.sentenceEnd(final)
		if end <= 0 {
			break
		}
		out = append(out, s.take(end)...)
	}
	if final {
		s.buf = s.buf[:0]
	}
	return out
}

// Break marks the end of one outgoing message ("@br"): what is held is a
// whole sentence.
func (s *Splitter) Break() []packets.Segment { return s.Flush() }

// Flush ends the text: what is held becomes the last segments.
func (s *Splitter) Flush() []packets.Segment {
	return s.feed(s.unmark.feed("", true), true)
}

func (s *Splitter) maxRunes() int {
	if s.MaxRunes > 0 {
		return s.MaxRunes
	}
	return 160
}

// sentenceEnd returns the length of the first complete sentence in the
// buffer (closing punctuation and quotes included), or -1 when none is
// complete yet. final: the text ends after the buffer.
func (s *Splitter) sentenceEnd(final bool) int {
	b := s.buf
	clause := -1
	for i := 0; i < len(b); i++ {
		r := b[i]
		if n, whole := span(b, i, final); n > 0 {
			if !whole {
				return -1 // the next fragment completes it
			}
			i += n - 1
			continue
		}
		switch {
		case (isStop(r) || r == '.' || r == ':' || r == ',' || r == '：') && i+1 == len(b) && !final && i > 0 && isDigit(b[i-1]):
			return -1 // "18:" or "3." may go on
		case (r == '.' || r == ':' || r == ',') && i > 0 && i+1 < len(b) && isDigit(b[i-1]) && isDigit(b[i+1]):
			continue // 18:52, 3.14, 1,000
		case isStop(r) || r == '\n':
			return s.closeAt(i+1, final)
		case r == '.':
			if ordinal(b, i) || abbreviation(b, i) {
				continue
			}
			if !final && i+2 >= len(b) && (ordinalBefore(b, i) || initialismBefore(b, i)) {
				return -1 // "2. " or "U.S. " may go on in lower case
			}
			// A Latin full stop ends a sentence before white space or the
			// end of the text; "e.g" does not.
			if i+1 < len(b) {
				if unicode.IsSpace(b[i+1]) || isCloser(b[i+1]) {
					return s.closeAt(i+1, final)
				}
			} else if final {
				return len(b)
			} else {
				return -1 // the next fragment decides
			}
		case isClause(r) || r == ' ' && i > 0 && b[i-1] != ' ':
			clause = i + 1
		}
		if s.emitted == 0 && s.FirstClause > 0 && clause > 0 && isClause(r) && i+1 >= s.FirstClause {
			return clause
		}
		if i+1 >= s.maxRunes() && clause > 0 {
			return clause
		}
	}
	if final && len(b) > 0 {
		return len(b)
	}
	return -1
}

// span is the length of a URL or a "%[...]" reference (with its range)
// starting at b[i], 0 when none starts there; whole is false when it may
// go on past the buffer's end.
func span(b []rune, i int, final bool) (n int, whole bool) {
	if starts, maybe := drivePath(b, i, final); starts {
		return pathSpan(b, i, final)
	} else if maybe {
		return len(b) - i, false
	}
	switch {
	case (has(b, i, "http://") || has(b, i, "https://") || has(b, i, "www.")) && (i == 0 || !isWordRune(b[i-1])):
		j := i
		for j < len(b) && b[j] < 0x80 && !unicode.IsSpace(b[j]) && !isCloser(b[j]) && b[j] != '<' {
			j++
		}
		if j == len(b) && !final {
			return j - i, false
		}
		// A full stop, comma or question mark that ends the URL is the
		// sentence's.
		for j > i && strings.ContainsRune(".,;:!?", b[j-1]) {
			j--
		}
		return j - i, true
	case has(b, i, "~/") && (i == 0 || !isWordRune(b[i-1])):
		return pathSpan(b, i, final)
	case has(b, i, "%["):
		j := i + 2
		for j < len(b) && b[j] != ']' && b[j] != '\n' && j-i < holdInline {
			j++
		}
		if j == len(b) {
			return j - i, final
		}
		if b[j] != ']' {
			return 0, true
		}
		j++
		if m := refRangeRE.FindStringIndex(string(b[j:])); m != nil {
			j += len([]rune(string(b[j:])[:m[1]]))
		} else if !final && len(b)-j < 24 && refRangeStartRE.MatchString(string(b[j:])) {
			return j - i, false
		}
		return j - i, true
	case (b[i] == '%' || b[i] == 'h' || b[i] == 'w') && i+8 > len(b) && !final && (isPrefix(b[i:], "https://") || isPrefix(b[i:], "http://") || isPrefix(b[i:], "www.") || isPrefix(b[i:], "%[")):
		if i > 0 && isWordRune(b[i-1]) {
			return 0, true
		}
		return len(b) - i, false // perhaps the start of one
	}
	return 0, true
}

// pathSpan is the length of a file path starting at b[i] ("C:\Users\me\a.txt",
// "~/notes/a.md"): up to white space, less a full stop or comma that ends
// the sentence after it.
func pathSpan(b []rune, i int, final bool) (int, bool) {
	j := i
	for j < len(b) && !unicode.IsSpace(b[j]) && !isCloser(b[j]) {
		j++
	}
	if j == len(b) && !final {
		return j - i, false
	}
	for j > i && strings.ContainsRune(".,;:!?。，", b[j-1]) {
		j--
	}
	return j - i, true
}

var (
	refRangeRE      = regexp.MustCompile(`^\s*(Line|message) \d+\s*~\s*(Line|message) \d+`)
	refRangeStartRE = regexp.MustCompile(`^\s*([Lm][a-z]*)?[\s\d]*~?\s*([Lm][a-z]*)?[\s\d]*$`)
)

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// ordinal: the full stop at b[i] follows a list's number ("1. "): at a
// line's start, after a colon ("Steps: 1. open the lid"), or inline before
// a word in lower case ("… the lid 2. add the water").
func ordinal(b []rune, i int) bool {
	j := i
	for j > 0 && isDigit(b[j-1]) {
		j--
	}
	if j == i || i-j > 3 || i+1 >= len(b) || b[i+1] != ' ' {
		return false
	}
	if j == 0 || b[j-1] == '\n' {
		return true
	}
	if b[j-1] != ' ' || i-j > 2 {
		return false
	}
	k := j - 1
	for k > 0 && b[k-1] == ' ' {
		k--
	}
	if k > 0 && (b[k-1] == ':' || b[k-1] == '：') {
		return true
	}
	return i+2 < len(b) && unicode.IsLower(b[i+2])
}

// abbreviations are the words a full stop does not end a sentence after,
// a table per language (all are checked: the splitter meets the full stop
// before it knows the sentence's language). Initialisms (U.S., p.m.,
// Ph.D., z.B.) are found by their shape instead (initialism).
var abbreviations = map[string][]string{
	"en": {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "no", "approx", "dept", "fig", "vol", "inc", "ltd", "co", "corp", "mt", "ft", "gen", "gov", "rev", "sgt", "capt", "lt", "col",
		"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"},
	"de": {"bzw", "ca", "nr", "str", "hr", "fr", "evtl", "ggf", "inkl", "zzgl", "vgl"},
	"fr": {"mme", "mlle", "env", "av", "bd"},
	"es": {"sra", "srta", "ud", "uds", "dra", "pág"},
}

func abbreviation(b []rune, i int) bool {
	j := i
	for j > 0 && (unicode.IsLetter(b[j-1]) && b[j-1] < 0x250 || b[j-1] == '.') {
		j--
	}
	word := strings.ToLower(string(b[j:i]))
	if word == "no" { // "No. 5", not "I said no."
		return i+2 < len(b) && b[i+1] == ' ' && isDigit(b[i+2])
	}
	if initialism(word) {
		// "The U.S. office" goes on; "… in the U.S. It is" ends.
		return i+2 < len(b) && b[i+1] == ' ' && !unicode.IsUpper(b[i+2]) || i+1 < len(b) && b[i+1] != ' '
	}
	for _, list := range abbreviations {
		if slices.Contains(list, word) {
			return true
		}
	}
	return false
}

// initialism: letters of one or two each, joined by full stops ("u.s",
// "p.m", "ph.d", "e.g", "z.b").
func initialism(word string) bool {
	parts := strings.Split(word, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if n := utf8.RuneCountInString(p); n < 1 || n > 2 {
			return false
		}
	}
	return true
}

// ordinalBefore: one or two digits, after a space, end at b[i].
func ordinalBefore(b []rune, i int) bool {
	j := i
	for j > 0 && isDigit(b[j-1]) {
		j--
	}
	return j < i && i-j <= 2 && (j == 0 || b[j-1] == ' ' || b[j-1] == '\n')
}

// initialismBefore: an initialism ("U.S") ends at b[i].
func initialismBefore(b []rune, i int) bool {
	j := i
	for j > 0 && (unicode.IsLetter(b[j-1]) && b[j-1] < 0x250 || b[j-1] == '.') {
		j--
	}
	return initialism(strings.ToLower(string(b[j:i])))
}

// drivePath reports whether b[i] starts a Windows path ("C:\Users\…") or
// may (the buffer ends inside "C:" while more text comes).
func drivePath(b []rune, i int, final bool) (starts, maybe bool) {
	if b[i] >= 0x80 || !unicode.IsLetter(b[i]) || i > 0 && isWordRune(b[i-1]) {
		return false, false
	}
	switch {
	case i+2 < len(b):
		return b[i+1] == ':' && b[i+2] == '\\', false
	case final:
		return false, false
	case i+1 == len(b):
		return false, false
	default: // "C:" ends the buffer
		return false, b[i+1] == ':'
	}
}

// closeAt extends a sentence end over the closing quotes, brackets and
// repeated stops that follow it ("好！」", "what?!"), waiting for more text
// when the buffer ends there.
func (s *Splitter) closeAt(end int, final bool) int {
	for end < len(s.buf) && (isCloser(s.buf[end]) || isStop(s.buf[end]) || s.buf[end] == '.') {
		end++
	}
	if end == len(s.buf) && !final {
		return -1
	}
	return end
}

// take removes the first n runes and returns them as segments (none when
// they hold nothing to say).
func (s *Splitter) take(n int) []packets.Segment {
	sentence := string(s.buf[:n])
	s.buf = append(s.buf[:0], s.buf[n:]...)
	emotion, sentence := EmotionOf(sentence, s.Words, s.Emotion)
	var out []packets.Segment
	for _, run := range s.runs(Speakable(sentence)) {
		out = append(out, packets.Segment{Emotion: emotion, Language: run.lang, Text: run.text})
	}
	s.emitted += len(out)
	return out
}

type run struct{ lang, text string }

// runs cuts a sentence where its script changes. A Latin run of fewer than
// three words inside Chinese or Japanese stays with it (the voice reads a
// name or a word in place); neutral characters (digits, punctuation, space)
// go with the run before them.
func (s *Splitter) runs(sentence string) []run {
	sentence = strings.TrimSpace(sentence)
	if sentence == "" || !hasLetters(sentence) {
		return nil
	}
	type piece struct {
		script string // cjk, kana (cjk with kana), hangul, latin, "" neutral
		text   string
	}
	var ps []*piece
	for _, r := range sentence {
		sc := scriptOf(r)
		if len(ps) == 0 {
			ps = append(ps, &piece{script: sc})
		}
		last := ps[len(ps)-1]
		switch {
		case sc == "" || sc == last.script:
		case last.script == "":
			last.script = sc
		case sc == "cjk" && last.script == "kana" || sc == "kana" && last.script == "cjk":
			last.script = "kana"
		default:
			last = &piece{script: sc}
			ps = append(ps, last)
		}
		last.text += string(r)
	}
	// A short Latin run between or beside CJK pieces joins them.
	for i := 0; i < len(ps); i++ {
		p := ps[i]
		if p.script != "latin" || len(ps) == 1 || len(strings.Fields(p.text)) >= 3 {
			continue
		}
		j := i - 1
		if j < 0 {
			j = i + 1
		}
		if i == 0 {
			ps[j].text = p.text + ps[j].text
		} else {
			ps[j].text += p.text
			if i+1 < len(ps) && ps[i+1].script == ps[j].script {
				ps[j].text += ps[i+1].text
				ps = append(ps[:i+1], ps[i+2:]...)
			}
		}
		ps = append(ps[:i], ps[i+1:]...)
		i--
	}
	var out []run
	for _, p := range ps {
		text := strings.TrimSpace(p.text)
		if text == "" || !hasLetters(text) {
			if len(out) > 0 {
				out[len(out)-1].text += p.text
			}
			continue
		}
		lang := "en"
		switch p.script {
		case "kana":
			lang = "ja"
		case "cjk":
			lang = "zh"
			if s.lastCJK == "ja" && hanCount(text) <= 3 {
				lang = "ja"
			}
		case "hangul":
			lang = "ko"
		}
		if p.script == "kana" || p.script == "cjk" {
			s.lastCJK = lang
		}
		if len(out) > 0 && out[len(out)-1].lang == lang {
			out[len(out)-1].text += p.text
			continue
		}
		out = append(out, run{lang: lang, text: p.text})
	}
	for i := range out {
		out[i].text = strings.TrimSpace(out[i].text)
	}
	return out
}

func scriptOf(r rune) string {
	switch {
	case unicode.In(r, unicode.Hiragana, unicode.Katakana) && r != '・' && r != 'ー':
		return "kana"
	case unicode.Is(unicode.Han, r):
		return "cjk"
	case unicode.Is(unicode.Hangul, r):
		return "hangul"
	case unicode.IsLetter(r) && r < 0x2000:
		return "latin"
	}
	return ""
}

func hanCount(s string) int {
	n := 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			n++
		}
	}
	return n
}

func hasLetters(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

func isStop(r rune) bool {
	switch r {
	case '。', '！', '？', '!', '?', '…', '｡', '．':
		return true
	}
	return false
}

func isClause(r rune) bool {
	switch r {
	case '，', '、', ',', ';', '；', '：', ':', '—':
		return true
	}
	return false
}

func isCloser(r rune) bool {
	switch r {
	case '」', '』', '”', '’', '"', '\'', ')', '）', ']', '】', '》', '〉':
		return true
	}
	return false
}

var (
	// What a voice should not read: file references, URLs, code, the
	// notation's markers, markdown emphasis, emoji.
	codeBlockRE  = regexp.MustCompile("(?s)```.*?(```|$)")
	fileRefRE    = regexp.MustCompile(`%\[[^\]\n]*\](\s*(Line|message) \d+\s*~\s*(Line|message) \d+)?`)
	urlRE        = regexp.MustCompile(`(https?://|www\.)[\x21-\x7e]*[A-Za-z0-9/#=&%_~+-]`)
	punctSpaceRE = regexp.MustCompile(` +([.,!?;:。，！？；：、…])`)
	lastRefRE    = regexp.MustCompile(`@last(_n)?_\S+`)
	markRE       = regexp.MustCompile("[*_`#>~|]+")
)

// Speakable is text as a voice should read it: a URL or a file reference
// is read as a short word ("a link", 链接, リンク) so the sentence still
// makes sense; degrees and °C/°F as words; code blocks, the notation's
// @last_ references, markdown marks and emoji removed; white space folded.
func Speakable(text string) string {
	words := spokenWords[speakLanguage(text)]
	text = codeBlockRE.ReplaceAllString(text, " ")
	text = fileRefRE.ReplaceAllString(text, words.link)
	text = urlRE.ReplaceAllString(text, words.link)
	text = degreesRE.ReplaceAllStringFunc(text, func(m string) string {
		g := degreesRE.FindStringSubmatch(m)
		switch strings.ToUpper(g[2]) {
		case "C":
			return g[1] + words.celsius
		case "F":
			return g[1] + words.fahrenheit
		}
		return g[1] + words.degrees
	})
	text = lastRefRE.ReplaceAllString(text, " ")
	text = strings.ReplaceAll(text, "<empty_reply>", " ")
	text = homePathRE.ReplaceAllString(text, "$1\x00/")
	text = markRE.ReplaceAllString(text, "")
	text = strings.ReplaceAll(text, "\x00", "~")
	text = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.Is(unicode.So, r) || unicode.Is(unicode.Cs, r) || r == 0xFE0F || r == 0x200D || unicode.IsControl(r) && r != '\n' {
			return -1
		}
		return r
	}, text)
	return punctSpaceRE.ReplaceAllString(strings.Join(strings.Fields(text), " "), "$1")
}

var (
	// degreesRE is a number with a degree sign and perhaps a scale
	// ("-3.5°C", "90 °F", "45°").
	degreesRE = regexp.MustCompile(`(\d)\s*°(?:\s*([CcFf])\b)?`)
	// homePathRE is the "~" of a home path, which markRE would take for
	// strike-through.
	homePathRE = regexp.MustCompile(`(^|[\s(（"'])~/`)
)

// spoken is what a voice says for what it cannot read, in one language
// (with the spaces around it that the language writes).
type spoken struct{ link, degrees, celsius, fahrenheit string }

var spokenWords = map[string]spoken{
	"en": {link: " a link ", degrees: " degrees", celsius: " degrees Celsius", fahrenheit: " degrees Fahrenheit"},
	"zh": {link: "链接", degrees: "度", celsius: "摄氏度", fahrenheit: "华氏度"},
	"ja": {link: "リンク", degrees: "度", celsius: "度", fahrenheit: "華氏度"},
	"ko": {link: " 링크 ", degrees: "도", celsius: "도", fahrenheit: "화씨도"},
}

// speakLanguage is the language a text's words are in, for the words
// Speakable puts in: Japanese with kana, Chinese with Han and no kana,
// Korean with Hangul, else English.
func speakLanguage(text string) string {
	lang := "en"
	for _, r := range text {
		switch scriptOf(r) {
		case "kana":
			return "ja"
		case "hangul":
			return "ko"
		case "cjk":
			lang = "zh"
		}
	}
	return lang
}
