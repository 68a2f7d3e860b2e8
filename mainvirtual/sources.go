package mainvirtual

import (
	"context"
	"fmt"
	"github.com/cyan-agent/cyan/notation"
	"strings"

	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/store"
)

// mainPrompt fills the main slot with the persona's rendered root prompt.
type mainPrompt struct{ persona func() *persona.Persona }

func (s mainPrompt) Section(_ context.Context, q Query, _ int, _ func(string) int) (Section, error) {
	p := s.persona()
	body, err := p.Render(map[string]any{"channel": q.Channel, "user": UserName(q, p.Name)})
	if err != nil {
		return Section{}, err
	}
	return Section{Body: body, Note: "persona " + p.Name}, nil
}

// UserName is who the persona talks to in a turn, as ${user} (a character
// card's {{user}}) names them: the speaker, named as their lines are, or
// "user" when the platform speaks (a proactive turn).
func UserName(q Query, agent string) string {
	if q.Speaker == "" || q.Speaker == "system" {
		return "user"
	}
	return notation.SpeakerName(q.Speaker, agent)
}

// reference fills the persona-reference slot with the few-shot corpus. The
// corpus is the persona author's own text and is not escaped.
type reference struct{ persona func() *persona.Persona }

func (s reference) Section(context.Context, Query, int, func(string) int) (Section, error) {
	return Section{Body: s.persona().Reference}, nil
}

// toolCalls fills the rough tool-call area with the newest tool results of
// the channel (SPEC §2 section 3), newest last, as many as fit the budget.
type toolCalls struct{ store *store.Store }

// toolCallsShown is the most tool results the area shows.
const toolCallsShown = 8

func (s toolCalls) Section(_ context.Context, q Query, budget int, count func(string) int) (Section, error) {
	msgs, err := s.store.RecentTools(q.Channel, toolCallsShown)
	if err != nil {
		return Section{}, err
	}
	var sec Section
	var lines []string
	used := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		line := fmt.Sprintf("#%s [%s] %s", notation.ToolName(m.ToolName), m.Time.Format(notation.TimeLayout), notation.Escape(m.Text))
		n := count(line)
		item := ItemTrace{ID: m.ID, Tokens: n}
		if used+n > budget {
			item.Reason = "over budget"
			sec.Items = append(sec.Items, item)
			continue
		}
		used += n
		item.Included = true
		sec.Items = append(sec.Items, item)
		lines = append(lines, line)
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	sec.Body = strings.Join(lines, "\n")
	return sec, nil
}
