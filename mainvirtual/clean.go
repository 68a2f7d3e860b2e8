package mainvirtual

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/notation"
)

// maxPrefix bounds how much of a line start the cleaner holds back to tell
// a speaker prefix ("^name [2006-01-02 15:04]:") from text.
const maxPrefix = 80

// cleaner takes out of a model's content, as it is written, what is not
// the answer: reasoning whose "<think>" the chat template wrote (so only
// "</think>" is in the content), the agent's own prefix copied from the
// context at the start of a line ("^青蓝 [time]:", "青蓝:", "[time]"), and
// everything from a line that starts another speaker's turn ("^me …",
// "^alice [time]: …"), which the model forged. What it takes out is kept
// for the trace (withheld), never sent. The stream and the stored copy
// both come out of it.
type cleaner struct {
	agent, name string // the agent's name, and as a "^name" line spells it
	// expectThink holds the text until "</think>" or the end: the model is
	// known to write reasoning the template opened.
	expectThink bool
	thinkDone   bool // no template-opened reasoning is held any more
	sawThink    bool // a bare "</think>" ended reasoning
	pend        string
	scanned     int  // how much of pend was searched for "</think>"
	midLine     bool // not at the start of a line
	forged      bool // a forged line was met: the rest is withheld
	withheld    strings.Builder
}

func newCleaner(agent string, expectThink bool) *cleaner {
	return &cleaner{agent: agent, name: notation.CleanName(agent), expectThink: expectThink}
}

// write takes the next piece of content and returns what may go on.
func (c *cleaner) write(s string) string { return c.run(s, false) }

// close returns what is still held at the end of the content.
func (c *cleaner) close() string { return c.run("", true) }

func (c *cleaner) run(s string, final bool) string {
	if c.forged {
		c.withheld.WriteString(s)
		return ""
	}
	c.pend += s
	if !c.thinkDone {
		from := max(c.scanned-len(llm.ThinkClose), 0)
		c.scanned = len(c.pend)
		if i := strings.Index(c.pend[from:], llm.ThinkClose); i >= 0 && !strings.Contains(c.pend[:from+i], "<think>") {
			i += from
			c.withheld.WriteString(strings.TrimSpace(c.pend[:i]))
			c.pend = strings.TrimLeftFunc(c.pend[i+len(llm.ThinkClose):], unicode.IsSpace)
			c.thinkDone, c.sawThink = true, true
		} else if c.expectThink && !final {
			return ""
		} else if !c.expectThink {
			c.thinkDone = true
		}
	}
	var out strings.Builder
	for c.pend != "" {
		if !c.midLine {
			n, forged, decided := c.lineStart(c.pend, final)
			if !decided {
				break
			}
			if forged {
				c.withheld.WriteString(c.pend)
				c.pend, c.forged = "", true
				break
			}
			if n > 0 {
				c.pend = c.pend[n:] // the agent's own prefix: dropped, and what follows read again
				continue
			}
			c.midLine = true
			continue
		}
		i, next := lineEnd(c.pend)
		if i < 0 {
			// Hold a piece that may be the start of "@br".
			k := len(c.pend)
			if !final {
				for j := 1; j < len(notation.Break) && j <= len(c.pend); j++ {
					if strings.HasSuffix(c.pend, notation.Break[:j]) {
						k = len(c.pend) - j
					}
				}
			}
			out.WriteString(c.pend[:k])
			c.pend = c.pend[k:]
			break
		}
		out.WriteString(c.pend[:next])
		c.pend = c.pend[next:]
		c.midLine = false
	}
	if final {
		out.WriteString(c.pend)
		c.pend = ""
	}
	return out.String()
}

// lineEnd finds the next line start in s: after a line break or an "@br";
// next is where the new line begins, i -1 when there is none.
func lineEnd(s string) (i, next int) {
	nl := strings.IndexByte(s, '\n')
	br := strings.Index(s, notation.Break)
	switch {
	case nl < 0 && br < 0:
		return -1, 0
	case br < 0 || (nl >= 0 && nl < br):
		return nl, nl + 1
	}
	return br, br + len(notation.Break)
}

// lineStart reads the start of a line: n bytes of the agent's own prefix
// to drop, or forged when the line starts another speaker's turn. decided
// is false while more text is needed to tell.
func (c *cleaner) lineStart(s string, final bool) (n int, forged, decided bool) {
	t := strings.TrimLeft(s, " \t")
	lead := len(s) - len(t)
	if t == "" {
		return 0, false, final
	}
	if t[0] == '[' {
		if rest, ok := cutTimeMark(t); ok {
			return len(s) - len(rest), false, true
		}
		if !final && len(t) < len("[2006-01-02 15:04]") && !strings.ContainsAny(t[1:], "]\n") {
			return 0, false, false
		}
		return 0, false, true
	}
	if t[0] == '^' {
		name, after, complete := speakerPrefix(t[1:])
		if !complete {
			if !final && utf8.RuneCountInString(t) < maxPrefix && !strings.Contains(t, "\n") {
				return 0, false, false
			}
			return 0, false, true
		}
		switch {
		case name == "":
			return 0, false, true
		case c.isAgent(name) && after > 0:
			return lead + 1 + after, false, true
		case c.isAgent(name):
			return 0, false, true
		case after > 0 || strings.EqualFold(name, "me"):
			return 0, true, true
		}
		return 0, false, true
	}
	for _, self := range []string{c.agent, c.name} {
		if self == "" {
			continue
		}
		for _, colon := range []string{":", "："} {
			p := self + colon
			if strings.HasPrefix(t, p) {
				rest := strings.TrimLeft(t[len(p):], " ")
				return len(s) - len(rest), false, true
			}
			if !final && strings.HasPrefix(p, t) {
				return 0, false, false
			}
		}
	}
	return 0, false, true
}

func (c *cleaner) isAgent(name string) bool {
	return c.agent != "" && (name == c.agent || name == c.name)
}

// speakerPrefix reads "name [time]:" or "name:" (s is after the "^"):
// after is the bytes through the colon and the spaces after it, 0 when the
// name is not followed by a colon ("^me hi"). complete is false while the
// name is still being written.
func speakerPrefix(s string) (name string, after int, complete bool) {
	end := strings.IndexFunc(s, func(r rune) bool {
		return r == ':' || r == '：' || r == '[' || r == '\n' || r == ' '
	})
	if end < 0 {
		return "", 0, false
	}
	name = s[:end]
	rest := s[end:]
	trimmed := strings.TrimLeft(rest, " ")
	if strings.HasPrefix(trimmed, "[") {
		close := strings.IndexByte(trimmed, ']')
		if close < 0 {
			return name, 0, len(trimmed) > len(" [2006-01-02 15:04]") || strings.Contains(trimmed, "\n")
		}
		trimmed = strings.TrimLeft(trimmed[close+1:], " ")
	}
	if trimmed == "" {
		return name, 0, false
	}
	for _, colon := range []string{":", "："} {
		if strings.HasPrefix(trimmed, colon) {
			t := strings.TrimLeft(trimmed[len(colon):], " ")
			return name, len(s) - len(t), true
		}
	}
	return name, 0, true
}
