package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/lorebook"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// loreSource fills the two lorebook slots of the prompt from the persona's
// lorebook (a character card's character_book): one scan a turn, its
// entries before and after the character's definition, and in the trace
// every entry that matched and why it fired or not.
type loreSource struct {
	persona func() *persona.Persona
	store   *store.Store
	rand    func() float64
	log     *slog.Logger
	// configured is agent.sections.lorebook (0: the book's token_budget, or
	// SillyTavern's share of context, agent.context_budget).
	configured, context int

	mu    sync.Mutex
	forP  *persona.Persona // the persona book was parsed for
	book  *lorebook.Book   // nil: no lorebook
	turns map[string]loreTurn
}

// loreTurn is a channel's scan, made by the first slot and used by the
// second.
type loreTurn struct {
	key  string
	book *lorebook.Book
	res  lorebook.Result
}

// newLoreSource checks the persona's lorebook now, so a broken one stops
// the daemon at start with the file's error.
func newLoreSource(p func() *persona.Persona, st *store.Store, log *slog.Logger, configured, context int) (*loreSource, error) {
	s := &loreSource{persona: p, store: st, rand: rand.Float64, log: log, turns: map[string]loreTurn{},
		configured: configured, context: context}
	cur := p()
	if cur.Lorebook != nil {
		b, err := lorebook.Parse(cur.Lorebook)
		if err != nil {
			return nil, fmt.Errorf("persona %s: %s: %w (fix the file, or remove lorebook: from persona.md)", cur.Dir, cur.LorebookFile, err)
		}
		s.book = b
	}
	s.forP = cur
	return s, nil
}

// bookOf returns the lorebook of persona p, parsed once per persona. A
// reloaded persona whose lorebook does not parse keeps the last good book
// (and the log says why), as a broken persona edit keeps the last persona.
func (s *loreSource) bookOf(p *persona.Persona) *lorebook.Book {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p == s.forP {
		return s.book
	}
	s.forP = p
	if p.Lorebook == nil {
		s.book = nil
		return nil
	}
	b, err := lorebook.Parse(p.Lorebook)
	if err != nil {
		s.log.Error("lorebook reload failed; keeping the previous one", "file", p.LorebookFile, "err", err)
		return s.book
	}
	s.book = b
	return b
}

// scan runs (or, for the second slot of the same turn, reuses) the turn's
// scan of the channel.
func (s *loreSource) scan(q mainvirtual.Query, budget int, count func(string) int, last bool) (loreTurn, error) {
	key := q.MessageID + "@" + q.Now.String()
	s.mu.Lock()
	t, ok := s.turns[q.Channel]
	if last {
		delete(s.turns, q.Channel)
	}
	s.mu.Unlock()
	if ok && t.key == key {
		return t, nil
	}
	p := s.persona()
	book := s.bookOf(p)
	t = loreTurn{key: key, book: book}
	if book == nil {
		return t, nil
	}
	depth := book.Depth()
	var lines []string
	if depth > 0 {
		recent, err := s.store.Recent(q.Channel, store.Window{Limit: depth, MaxScan: 4*depth + 16, Keep: func(m *store.Message) bool {
			return (m.Role == store.RoleUser || m.Role == store.RoleAssistant) && m.Text != "" && !m.IsRecalled()
		}})
		if err != nil {
			return t, fmt.Errorf("lorebook: read the conversation: %w", err)
		}
		for i := len(recent) - 1; i >= 0; i-- { // newest first
			lines = append(lines, recent[i].User+": "+recent[i].Text)
		}
	}
	t.res = book.Activate(lorebook.Input{Messages: lines, Char: p.Name, User: mainvirtual.UserName(q, p.Name),
		Budget: min(book.Room(s.configured, s.context), budget), Count: count, Rand: s.rand})
	if !last {
		s.mu.Lock()
		s.turns[q.Channel] = t
		s.mu.Unlock()
	}
	return t, nil
}

// slot is the Source of one of the two lorebook slots.
func (s *loreSource) slot(pos lorebook.Position) mainvirtual.Source {
	return mainvirtual.SourceFunc(func(_ context.Context, q mainvirtual.Query, budget int, count func(string) int) (mainvirtual.Section, error) {
		t, err := s.scan(q, budget, count, pos == lorebook.After)
		if err != nil || t.book == nil {
			return mainvirtual.Section{}, err
		}
		fired := t.res.After
		if pos == lorebook.Before {
			fired = t.res.Before
		}
		sec := mainvirtual.Section{Body: lorebook.Render(fired)}
		for _, f := range t.res.Matched {
			if f.Entry.Position == pos {
				sec.Items = append(sec.Items, packets.SectionItem{ID: f.Entry.Label(), Tokens: f.Tokens, Included: f.Included, Reason: f.Reason()})
			}
		}
		if pos == lorebook.After {
			name := t.book.Name
			if name == "" {
				name = s.persona().LorebookFile
			}
			sec.Note = fmt.Sprintf("lorebook %q: %d entries, %d matched in the last %d messages, %d in the prompt (%d tokens, budget %d)",
				name, len(t.book.Entries), len(t.res.Matched), t.res.Scanned, len(t.res.Before)+len(t.res.After), t.res.Used, t.res.Budget)
		}
		return sec, nil
	})
}

// greeting is main-virtual's Greeting: the persona's, for the person who
// opened the channel.
func greeting(p func() *persona.Persona) func(mainvirtual.Query) (string, error) {
	return func(q mainvirtual.Query) (string, error) {
		cur := p()
		return cur.Greeting(q.Channel, q.Kind == turn.KindGroup, mainvirtual.UserName(q, cur.Name))
	}
}

// loreSlotBudget is the bound of each lorebook slot in the prompt: the
// owner's agent.sections.lorebook when set, else the context budget (a
// book's own room, lorebook.Book.Room, is decided each scan).
func loreSlotBudget(a config.Agent) int {
	if a.Sections.Lorebook > 0 {
		return a.Sections.Lorebook
	}
	return a.ContextBudget
}

// addLoreSources puts the lorebook's two slots into sources, and their
// bounds into budgets.
func addLoreSources(sources map[turn.Slot]mainvirtual.Source, budgets map[turn.Slot]int, p func() *persona.Persona, st *store.Store, log *slog.Logger, a config.Agent) error {
	s, err := newLoreSource(p, st, log, a.Sections.Lorebook, a.ContextBudget)
	if err != nil {
		return err
	}
	budgets[turn.SlotLoreBefore] = loreSlotBudget(a)
	budgets[turn.SlotLoreAfter] = loreSlotBudget(a)
	sources[turn.SlotLoreBefore] = s.slot(lorebook.Before)
	sources[turn.SlotLoreAfter] = s.slot(lorebook.After)
	return nil
}
