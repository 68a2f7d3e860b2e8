package mainvirtual

import (
	"context"
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// RootVars are the variables the platform gives the root prompt each turn:
//
//   - now: the turn's time with its weekday and zone, "2026-11-23 18:31
//     Monday CST +08:00" — plans need absolute times;
//   - channel and channel_kind ("private" or "group");
//   - speaker: who spoke the incoming message, as the context names them.
func RootVars(q turn.Query) map[string]any {
	kind := q.Kind
	if kind == "" {
		kind = turn.KindPrivate
	}
	return map[string]any{
		"now":          q.Now.Format("2006-01-02 15:04 Monday MST -07:00"),
		"channel":      q.Channel,
		"channel_kind": kind,
		"speaker":      notation.CleanName(q.Speaker),
	}
}

// mainPrompt fills the main slot with the persona's rendered root prompt.
type mainPrompt struct{ persona func() *persona.Persona }

func (s mainPrompt) Section(_ context.Context, q turn.Query, _ int, _ func(string) int) (turn.Section, error) {
	p := s.persona()
	vars := RootVars(q)
	vars["user"] = UserName(q, p.Name)
	body, err := p.Render(vars)
	if err != nil {
		return turn.Section{}, err
	}
	return turn.Section{Body: body, Note: "persona " + p.Name}, nil
}

// UserName is who the persona talks to in a turn, as ${user} (a character
// card's {{user}}) names them: the speaker, named as their lines are, or
// "user" when the platform speaks (a proactive turn).
func UserName(q turn.Query, agent string) string {
	if q.Speaker == "" || q.Speaker == "system" {
		return "user"
	}
	return notation.SpeakerName(q.Speaker, agent)
}

// reference fills the persona-reference slot with the few-shot corpus. The
// corpus is the persona author's own text and is not escaped.
type reference struct{ persona func() *persona.Persona }

func (s reference) Section(context.Context, turn.Query, int, func(string) int) (turn.Section, error) {
	return turn.Section{Body: s.persona().Reference}, nil
}

// toolCalls fills the rough tool-call area with the newest tool results of
// the channel (SPEC §2 section 3), newest last, as many as fit the budget.
// Reports (workspace_usage) are not shown; a file's contents are shown
// until the channel's next user message (SPEC §3: a file read but not put
// into the workspace is forgotten then — the agent may read it again, or
// keep it with context_operation "keep %[path]").
type toolCalls struct{ store *store.Store }

// toolCallsShown is the most tool results the area shows.
const toolCallsShown = 8

func (s toolCalls) Section(_ context.Context, q turn.Query, budget int, count func(string) int) (turn.Section, error) {
	msgs, err := s.store.RecentTools(q.Channel, 2*toolCallsShown)
	if err != nil {
		return turn.Section{}, err
	}
	lastUser := ""
	var sec turn.Section
	var lines []string
	used, shown := 0, 0
	for i := len(msgs) - 1; i >= 0 && shown < toolCallsShown; i-- {
		m := msgs[i]
		switch m.Area {
		case store.AreaNone:
			continue
		case store.AreaTurn:
			if lastUser == "" {
				if lastUser, err = s.lastUserMessage(q.Channel); err != nil {
					return turn.Section{}, err
				}
			}
			if m.ID < lastUser {
				sec.Items = append(sec.Items, packets.SectionItem{ID: m.ID, Reason: "a file read before the last user message, not kept in the workspace: forgotten"})
				continue
			}
		}
		shown++
		line := fmt.Sprintf("#%s [%s] %s", notation.ToolName(m.ToolName), m.Time.Format(notation.TimeLayout), notation.Escape(m.Text))
		n := count(line)
		item := packets.SectionItem{ID: m.ID, Tokens: n}
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

// lastUserMessage is the id of the channel's newest user message ("\xff"
// when none is among the newest 512 messages: anything older is forgotten).
func (s toolCalls) lastUserMessage(channel string) (string, error) {
	m, err := s.store.Recent(channel, store.Window{Limit: 1, MaxScan: 512, Keep: func(m *store.Message) bool { return m.Role == store.RoleUser }})
	if err != nil || len(m) == 0 {
		return "\xff", err
	}
	return m[0].ID, nil
}
