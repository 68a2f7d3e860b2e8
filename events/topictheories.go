package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// Theories come to the topic (the seed: "对于某个事态会引入某个theory包，
// 该theory包会作为某次话题的上下文" — a theory the matter at hand touches
// becomes context of that topic). Each turn, the talk of the channel's
// current topic (its newest messages since the last silence) is matched
// against the theories by the recall index (FindTheories), under the
// reader's permission: the index's filter (a conversation's theories
// there, the owner's only for the owner in private) and then the reader's
// own infos, as a prompt may show them (packets.Reader.InPrompt). Each
// theory that fits enters the pulled-info area as its reference and first
// lines, within events.theories_budget; the trace says what the talk and
// the theory share.

// TheoryQuery is a topic's talk to match and whom it is matched for.
type TheoryQuery struct {
	Text    string
	Channel string
	Owner   bool // the owner talking in private: the owner's theories may fit
	Limit   int
}

// TheoryMatch is a theory the talk touches: its id, its search score
// (0–100) and the words they share.
type TheoryMatch struct {
	ID     string
	Score  float64
	Shared []string
}

// TheoryFinder finds the theories a topic's talk touches, best first.
type TheoryFinder func(ctx context.Context, q TheoryQuery) ([]TheoryMatch, error)

// Bounds of the theories a topic brings.
const (
	// topicMessages is how many of the topic's newest messages are matched.
	topicMessages = 12
	// topicTheories is the most theories one topic brings.
	topicTheories = 3
	// theoryLead bounds the first lines shown of a theory, in runes.
	theoryLead = 160
)

// TopicTheories fills the theories' part of the pulled-info area for q's
// turn, within min(events.theories_budget, budget/2) tokens.
func (l *Log) TopicTheories(ctx context.Context, q SectionQuery, budget int, count func(string) int) (turn.Section, error) {
	var sec turn.Section
	budget = min(l.cfg.TheoriesBudget, budget/2)
	if l.theories == nil || budget <= 0 {
		return sec, nil
	}
	talk, n, err := l.topicTalk(q.Channel, q.Now)
	if err != nil || talk == "" {
		return sec, err
	}
	reader := q.reader()
	matches, err := l.theories(ctx, TheoryQuery{Text: talk, Channel: q.Channel, Owner: reader.Owner && reader.Private, Limit: topicTheories})
	if err != nil {
		return sec, fmt.Errorf("events: theories of the topic in %s: %w", q.Channel, err)
	}
	var lines []string
	used := 0
	for _, m := range matches {
		t, err := l.Theory(m.ID)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since the index read it
		}
		if err != nil {
			return sec, err
		}
		if !reader.InPrompt(packets.InfoTheories, t.ScopeOf()) {
			continue // not this reader's to see: not even named in the trace
		}
		line := "%[" + l.theoryRef(t) + "] - " + l.escape(theoryLeadOf(t.Article))
		if !strings.HasSuffix(l.theoryRef(t), t.Title) {
			line = "%[" + l.theoryRef(t) + "] " + l.escape(strings.Join(strings.Fields(t.Title), " ")) + " - " + l.escape(theoryLeadOf(t.Article))
		}
		why := fmt.Sprintf("the topic's talk touches it (recall score %.0f; shared: %s)", m.Score, strings.Join(m.Shared, ", "))
		item := packets.SectionItem{ID: "theory:" + t.ID, Tokens: count(line) + 1, Reason: why}
		if used+item.Tokens > budget {
			item.Reason = fmt.Sprintf("%s; over the theories' budget (%d tokens)", why, budget)
		} else {
			used += item.Tokens
			item.Included = true
			lines = append(lines, line)
		}
		sec.Items = append(sec.Items, item)
	}
	sec.Body = strings.Join(lines, "\n")
	sec.Note = fmt.Sprintf("theories for the topic: %d shown, matched on its last %d messages", len(lines), n)
	return sec, nil
}

// theoryRef is the reference that opens t: its title, or its id when the
// title would not survive inside %[...] (the line then shows the title
// after it).
func (l *Log) theoryRef(t *Theory) string {
	if strings.ContainsAny(t.Title, "[]\n") || l.escape(t.Title) != t.Title {
		return RefTheory + t.ID
	}
	return RefTheory + t.Title
}

// theoryLeadOf is an article's first lines, on one line, within theoryLead
// runes.
func theoryLeadOf(article string) string {
	var parts []string
	size := 0
	for line := range strings.SplitSeq(article, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		parts = append(parts, line)
		size += utf8.RuneCountInString(line)
		if size >= theoryLead || len(parts) == 2 {
			break
		}
	}
	s := strings.Join(parts, " / ")
	if utf8.RuneCountInString(s) > theoryLead {
		r := []rune(s)
		s = string(r[:theoryLead-1]) + "…"
	}
	return s
}

// topicTalk is the text of the channel's current topic: its newest
// messages (at most topicMessages) back to the last silence, oldest first,
// one text a line (not the speakers' names: a name is not a matter), and
// how many there are. A channel whose
// newest message is older than the silence has no current topic.
func (l *Log) topicTalk(channel string, now time.Time) (string, int, error) {
	msgs, err := l.st.Recent(channel, store.Window{Limit: topicMessages, MaxScan: 4 * topicMessages, Keep: func(m *store.Message) bool {
		return m.Conversational() && m.Role != store.RoleSystem && m.Text != ""
	}})
	if err != nil || len(msgs) == 0 {
		return "", 0, err
	}
	if !now.IsZero() && l.gapOver(now, msgs[len(msgs)-1].Time) && now.After(msgs[len(msgs)-1].Time) {
		return "", 0, nil
	}
	first := len(msgs) - 1
	for first > 0 && !l.gapOver(msgs[first].Time, msgs[first-1].Time) {
		first--
	}
	var b strings.Builder
	for _, m := range msgs[first:] {
		b.WriteString(m.Text)
		b.WriteByte('\n')
	}
	return b.String(), len(msgs) - first, nil
}
