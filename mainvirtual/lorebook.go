package mainvirtual

import (
	"context"
	"log/slog"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/lorebook"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// loreOwner is the persona as the lorebook source sees it.
func loreOwner(p *persona.Persona) lorebook.Owner {
	return lorebook.Owner{Key: p, Data: p.Lorebook, File: p.LorebookFile, Dir: p.Dir, Char: p.Name}
}

// addLoreSources puts the persona's lorebook's two slots (lorebook.Source)
// into sources: they are built in, as the main prompt and the reference
// are. A slot scans the channel's recent conversation from the store; a
// book that does not parse stops New. window says the model's window (0:
// not known). The returned room is the two slots' budget for a window: the
// book's token_budget, else SillyTavern's share of the window
// (lorebook.Source.Room), so a bigger model's window gives the lorebook
// more; when the whole prompt does not fit, the lorebook still gives way
// after the conversation's least and the pulled info (window.go).
func addLoreSources(sources map[turn.Slot]turn.Source, p func() *persona.Persona, st *store.Store, log *slog.Logger, a config.Agent, window func(context.Context) int) (room func(window int) int, err error) {
	src, err := lorebook.NewSource(lorebook.SourceOptions{Owner: loreOwner(p()), Configured: a.Sections.Lorebook, Context: a.ContextBudget, Logger: log})
	if err != nil {
		return nil, err
	}
	slot := func(pos lorebook.Position) turn.Source {
		return turn.SourceFunc(func(ctx context.Context, q turn.Query, budget int, count func(string) int) (turn.Section, error) {
			cur := p()
			s, err := src.Fill(pos, lorebook.Turn{Owner: loreOwner(cur), Channel: q.Channel, ID: q.MessageID + "@" + q.Now.String(),
				User: UserName(q, cur.Name), Budget: budget, Window: window(ctx), Count: count, Recent: recentLines(st, q.Channel)})
			sec := turn.Section{Body: s.Body, Note: s.Note}
			for _, f := range s.Matched {
				sec.Items = append(sec.Items, packets.SectionItem{ID: f.Entry.Label(), Tokens: f.Tokens, Included: f.Included, Reason: f.Reason()})
			}
			return sec, err
		})
	}
	sources[turn.SlotLoreBefore], sources[turn.SlotLoreAfter] = slot(lorebook.Before), slot(lorebook.After)
	return func(window int) int { return src.Room(loreOwner(p()), window) }, nil
}

// recentLines reads a channel's last n messages of conversation
// (store.Message.Conversational) that people or the agent wrote — not the
// platform's lines, not a silence — newest first, as a lorebook scans
// them.
func recentLines(st *store.Store, channel string) func(n int) ([]string, error) {
	return func(n int) ([]string, error) {
		recent, err := st.Recent(channel, store.Window{Limit: n, MaxScan: 4*n + 16, Keep: func(m *store.Message) bool {
			return m.Conversational() && m.Role != store.RoleSystem && m.Text != ""
		}})
		var lines []string
		for i := len(recent) - 1; i >= 0; i-- {
			lines = append(lines, recent[i].User+": "+recent[i].Text)
		}
		return lines, err
	}
}

// PersonaGreeting is a Greeting (Options.Greeting): the persona's own
// (a character card's first_mes), for the person who opened the channel.
func PersonaGreeting(p func() *persona.Persona) func(turn.Query) (string, error) {
	return func(q turn.Query) (string, error) {
		cur := p()
		return cur.Greeting(q.Channel, q.Kind == turn.KindGroup, UserName(q, cur.Name))
	}
}
