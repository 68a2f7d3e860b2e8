package recall

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Temporal handling. Two signals, both cheap and without a model:
//
//   - a "when" question ("when did …", "what year …", "how long ago …",
//     "什么时候", "いつ") favours lines that state when something happened:
//     "yesterday", "last week", "in May", "2022", "三天前" (statesTime, kept
//     per message at index time);
//   - a date the question names ("on 1 May, 2022", "in July 2022", "in
//     2021", "summer 2022") favours messages said on it or in the two weeks
//     after it: people tell of a thing soon after it happened
//     (questionDates).

// whenRe matches questions that ask for a time.
var whenRe = regexp.MustCompile(`(?i)(^|[^\pL])(when|what (date|day|time|month|year|week)|which (date|day|month|year|week)|how long ago|how long (has|have|had|did|was|were|is)|since when|how many (days|weeks|months|years)( ago| before| after| between)?)([^\pL]|$)|什么时候|何时|哪天|哪一天|哪年|几号|几月|多久|いつ|何日|何年|何月`)

// whenQuestion reports whether a question asks when.
func whenQuestion(q string) bool { return whenRe.MatchString(q) }

const monthNames = `jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?`

// timeWords place an event in time on their own; timePairs do after the
// word before them ("this week", "few days", "just got", "in may": "may"
// alone is a verb).
var (
	timeWords = wordSet(`yesterday today tonight tomorrow ago recently lately earlier later soon weekend weekends
last next since until january february march april june july august september october november december
jan feb aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday`)
	timePairs = map[string]map[string]bool{
		"this":   wordSet("morning afternoon evening week month year summer winter spring fall autumn"),
		"few":    wordSet("days weeks months years"),
		"couple": wordSet("days weeks months"),
		"other":  wordSet("day week"),
		"just":   wordSet("got finished started came went had did made signed joined bought moved"),
		"in":     wordSet("may"),
	}
	cjkTimeWords = strings.Fields("昨天 今天 明天 前天 后天 上周 下周 上个月 下个月 去年 今年 明年 最近 刚才 刚刚 天前 周前 年前 昨日 今日 明日 先週 来週 先月 来月 来年")
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// statesTime reports whether a line places something in time: a time
// word, a year (1900–2099), a pair like "this week" or "May 3". One pass
// over the words, no regular expression: it runs on every indexed message.
func statesTime(text string) bool {
	prev := ""
	isYear := func(w string) bool {
		return len(w) == 4 && (w[:2] == "19" || w[:2] == "20") && w[2] >= '0' && w[2] <= '9' && w[3] >= '0' && w[3] <= '9'
	}
	for i := 0; i < len(text); {
		for i < len(text) && !isWordByte(text[i]) {
			i++
		}
		j := i
		for j < len(text) && isWordByte(text[j]) {
			j++
		}
		if j == i {
			break
		}
		w := strings.ToLower(text[i:j])
		if timeWords[w] || isYear(w) || timePairs[prev][w] || (prev == "may" && w[0] >= '0' && w[0] <= '9') {
			return true
		}
		prev, i = w, j
	}
	if !ascii(text) {
		for _, w := range cjkTimeWords {
			if strings.Contains(text, w) {
				return true
			}
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

var (
	monthRe     = `(` + monthNames + `)\.?`
	dayMonthRe  = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?(?: of)? ` + monthRe + `,? (\d{4})\b`)
	monthDayRe  = regexp.MustCompile(`(?i)\b` + monthRe + ` (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})\b`)
	monthYearRe = regexp.MustCompile(`(?i)\b` + monthRe + `,? (?:of )?(\d{4})\b`)
	seasonRe    = regexp.MustCompile(`(?i)\b(spring|summer|fall|autumn|winter)(?: of)?,? (\d{4})\b`)
	isoDateRe   = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	yearRe      = regexp.MustCompile(`\b((?:19|20)\d\d)\b`)
	cjkDateRe   = regexp.MustCompile(`((?:19|20)\d\d)年(?:(\d{1,2})月(?:(\d{1,2})[日号])?)?`)
)

func monthOf(s string) time.Month {
	s = strings.ToLower(strings.TrimSuffix(s, "."))
	for m := time.January; m <= time.December; m++ {
		if strings.HasPrefix(strings.ToLower(m.String()), s[:min(3, len(s))]) {
			return m
		}
	}
	return 0
}

// questionDates returns the span of days a question names, [from, to) in
// UTC, or ok false when it names none. The most precise expression wins:
// a day, then a month, a season, a year.
func questionDates(q string) (from, to time.Time, ok bool) {
	day := func(y, m, d int) (time.Time, time.Time, bool) {
		if m < 1 || m > 12 || d < 1 || d > 31 {
			return time.Time{}, time.Time{}, false
		}
		t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
		return t, t.AddDate(0, 0, 1), true
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	if m := isoDateRe.FindStringSubmatch(q); m != nil {
		return day(atoi(m[1]), atoi(m[2]), atoi(m[3]))
	}
	if m := dayMonthRe.FindStringSubmatch(q); m != nil {
		return day(atoi(m[3]), int(monthOf(m[2])), atoi(m[1]))
	}
	if m := monthDayRe.FindStringSubmatch(q); m != nil {
		return day(atoi(m[3]), int(monthOf(m[1])), atoi(m[2]))
	}
	if m := cjkDateRe.FindStringSubmatch(q); m != nil {
		y := atoi(m[1])
		switch {
		case m[3] != "":
			return day(y, atoi(m[2]), atoi(m[3]))
		case m[2] != "":
			if mo := atoi(m[2]); mo >= 1 && mo <= 12 {
				t := time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, time.UTC)
				return t, t.AddDate(0, 1, 0), true
			}
		default:
			t := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
			return t, t.AddDate(1, 0, 0), true
		}
	}
	if m := monthYearRe.FindStringSubmatch(q); m != nil {
		t := time.Date(atoi(m[2]), monthOf(m[1]), 1, 0, 0, 0, 0, time.UTC)
		return t, t.AddDate(0, 1, 0), true
	}
	if m := seasonRe.FindStringSubmatch(q); m != nil {
		first := map[string]time.Month{"spring": time.March, "summer": time.June, "fall": time.September, "autumn": time.September, "winter": time.December}[strings.ToLower(m[1])]
		t := time.Date(atoi(m[2]), first, 1, 0, 0, 0, 0, time.UTC)
		return t, t.AddDate(0, 3, 0), true
	}
	if m := yearRe.FindStringSubmatch(q); m != nil {
		t := time.Date(atoi(m[1]), 1, 1, 0, 0, 0, 0, time.UTC)
		return t, t.AddDate(1, 0, 0), true
	}
	return time.Time{}, time.Time{}, false
}

// dateLag is how long after a named date its telling is looked for.
const dateLag = 14 * 24 * time.Hour
