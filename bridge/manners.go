package bridge

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/cyan-agent/cyan/config"
)

// addressed reports whether a group message speaks to the bot, and how:
// an @mention of its id, a reply to one of its messages, a command for it,
// or one of its names or wake words in the text.
func addressed(m *Message, self User, names []string, sentByBot func(id string) bool) (bool, string) {
	if m.Command != "" {
		return true, "command"
	}
	for _, p := range m.Parts {
		switch p.Kind {
		case PartMention:
			if self.ID != "" && p.UserID == self.ID {
				return true, "mention"
			}
		case PartReply:
			if p.ToSelf || (sentByBot != nil && p.MessageID != "" && sentByBot(p.MessageID)) {
				return true, "reply"
			}
		}
	}
	text := m.Text()
	if self.Username != "" && containsWord(text, "@"+self.Username) {
		return true, "mention"
	}
	for _, n := range names {
		if containsWord(text, n) {
			return true, "name"
		}
	}
	return false, ""
}

// containsWord reports whether text contains word (case-insensitively),
// not as part of a longer Latin word: "cyan" is in "hi cyan!" and
// "cyan，你好", not in "cyanide". CJK names match anywhere.
func containsWord(text, word string) bool {
	word = strings.TrimSpace(word)
	if word == "" {
		return false
	}
	lt, lw := strings.ToLower(text), strings.ToLower(word)
	for i := 0; ; {
		j := strings.Index(lt[i:], lw)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(lw)
		if boundary(lt, start, true, lw) && boundary(lt, end, false, lw) {
			return true
		}
		i = start + 1
		if i >= len(lt) {
			return false
		}
	}
}

// boundary checks the rune before (at start) or after (at end) a match: a
// Latin letter or digit there continues a word, unless the word itself
// begins or ends with a non-Latin rune.
func boundary(s string, at int, before bool, word string) bool {
	var r rune
	if before {
		if at == 0 {
			return true
		}
		r = lastRune(s[:at])
		if !latin(firstRune(word)) {
			return true
		}
	} else {
		if at >= len(s) {
			return true
		}
		r = firstRune(s[at:])
		if !latin(lastRune(word)) {
			return true
		}
	}
	return !latin(r)
}

func latin(r rune) bool {
	return r < 0x250 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
}

func firstRune(s string) rune {
	for _, r := range s {
		return r
	}
	return 0
}

func lastRune(s string) rune {
	rs := []rune(s)
	if len(rs) == 0 {
		return 0
	}
	return rs[len(rs)-1]
}

// window counts events in the last minute, for the turn limits.
type window struct {
	times []time.Time
}

// allow reports whether one more event fits under limit per minute at now,
// and records it if so; else it returns when it will fit.
func (w *window) allow(now time.Time, limit int) (bool, time.Time) {
	if limit <= 0 {
		return true, now
	}
	w.prune(now)
	if len(w.times) < limit {
		w.times = append(w.times, now)
		return true, now
	}
	return false, w.times[0].Add(time.Minute)
}

// next returns when one more event will fit, without recording one.
func (w *window) next(now time.Time, limit int) time.Time {
	if limit <= 0 {
		return now
	}
	w.prune(now)
	if len(w.times) < limit {
		return now
	}
	return w.times[len(w.times)-limit].Add(time.Minute)
}

func (w *window) prune(now time.Time) {
	cut := 0
	for cut < len(w.times) && !w.times[cut].After(now.Add(-time.Minute)) {
		cut++
	}
	w.times = w.times[cut:]
}

// quiet is a daily span of local time ("23:00-07:00").
type quiet struct {
	from, to int // minutes after midnight
	set      bool
}

func parseQuiet(s string) (quiet, error) {
	if s == "" {
		return quiet{}, nil
	}
	a, b, ok := strings.Cut(s, "-")
	fa, ea := clockMinutes(a)
	fb, eb := clockMinutes(b)
	if !ok || ea != nil || eb != nil || fa == fb {
		return quiet{}, fmt.Errorf("bridge: quiet hours %q are not HH:MM-HH:MM", s)
	}
	return quiet{from: fa, to: fb, set: true}, nil
}

func clockMinutes(s string) (int, error) {
	t, err := time.Parse("15:04", strings.TrimSpace(s))
	if err != nil {
		return 0, err
	}
	return t.Hour()*60 + t.Minute(), nil
}

// in reports whether t falls in the span; end is when the span ends.
func (q quiet) in(t time.Time) (bool, time.Time) {
	if !q.set {
		return false, t
	}
	m := t.Hour()*60 + t.Minute()
	inside := q.from < q.to && m >= q.from && m < q.to || q.from > q.to && (m >= q.from || m < q.to)
	if !inside {
		return false, t
	}
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	end := day.Add(time.Duration(q.to) * time.Minute)
	if !end.After(t) {
		end = end.AddDate(0, 0, 1)
	}
	return true, end
}

// lists are the allow and deny lists of a bridge.
type lists struct {
	allowGroups, denyGroups, denyUsers []string
}

func listsOf(m config.Manners) lists {
	return lists{allowGroups: m.AllowGroups, denyGroups: m.DenyGroups, denyUsers: m.DenyUsers}
}

// serves reports whether a message of this chat and speaker may be kept.
func (l lists) serves(c Chat, userID string) bool {
	if slices.Contains(l.denyUsers, userID) {
		return false
	}
	if c.Kind != Group {
		return true
	}
	if slices.Contains(l.denyGroups, c.ID) {
		return false
	}
	return len(l.allowGroups) == 0 || slices.Contains(l.allowGroups, c.ID)
}

// replyDelay is the pause before a further part of a reply: a base, a bit
// per character, capped.
func replyDelay(m config.Manners, text string) time.Duration {
	d := time.Duration(m.ReplyDelay) + time.Duration(len([]rune(text)))*time.Duration(m.CharDelay)
	if max := time.Duration(m.MaxDelay); max > 0 && d > max {
		d = max
	}
	return d
}
