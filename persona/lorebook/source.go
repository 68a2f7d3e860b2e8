package lorebook

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
)

// Owner is the persona a book belongs to, as a Source sees it: Key tells
// one persona from another (a reloaded persona is a new one), Data is its
// lorebook (nil: none), File and Dir name it in errors, Char is the
// character's name.
type Owner struct {
	Key       any
	Data      []byte
	File, Dir string
	Char      string
}

// SourceOptions configure NewSource.
type SourceOptions struct {
	// Owner is the persona at start: its book is checked now.
	Owner Owner
	// Configured is agent.sections.lorebook (0: the book's token_budget,
	// or SillyTavern's share of the model's window); Context is
	// agent.context_budget, the window the share is taken of when a turn
	// does not know the model's (Turn.Window).
	Configured, Context int
	// Rand returns a number in [0, 1) for probability rolls (nil:
	// math/rand/v2).
	Rand   func() float64
	Logger *slog.Logger // nil: discard
}

// Source fills the prompt's two lorebook slots from the persona's
// lorebook (a character card's character_book): one scan a turn, its
// entries before and after the character's definition, and for the trace
// every entry that matched and why it fired or not. The book is parsed
// once per persona; a reloaded persona whose book does not parse keeps
// the last good book (and the log says why), as a broken persona edit
// keeps the last persona.
type Source struct {
	configured, context int
	rand                func() float64
	log                 *slog.Logger

	mu     sync.Mutex
	forKey any   // the persona book was parsed for
	book   *Book // nil: no lorebook
	turns  map[string]scan
}

// scan is a channel's scan, made by the first slot and used by the second.
type scan struct {
	key  string
	book *Book
	res  Result
}

// NewSource checks the persona's lorebook now, so a broken one stops the
// daemon at start with the file's error.
func NewSource(o SourceOptions) (*Source, error) {
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Source{configured: o.Configured, context: o.Context, rand: o.Rand, log: o.Logger, turns: map[string]scan{}, forKey: o.Owner.Key}
	if o.Owner.Data != nil {
		b, err := Parse(o.Owner.Data)
		if err != nil {
			return nil, fmt.Errorf("persona %s: %s: %w (fix the file, or remove lorebook: from persona.md)", o.Owner.Dir, o.Owner.File, err)
		}
		s.book = b
	}
	return s, nil
}

// Room is the tokens the lorebook of owner o may take in a prompt for a
// model whose window is window tokens (0: not known): the book's
// token_budget, else SillyTavern's share of the window (or, when it is
// not known, of agent.context_budget), bounded by agent.sections.lorebook
// when set. A persona without a lorebook gets 0.
func (s *Source) Room(o Owner, window int) int {
	book := s.bookOf(o)
	if book == nil {
		return 0
	}
	return s.room(book, window)
}

func (s *Source) room(book *Book, window int) int {
	if window <= 0 {
		window = s.context
	}
	return book.Room(s.configured, window)
}

// bookOf returns the book of owner o, parsed once per owner.
func (s *Source) bookOf(o Owner) *Book {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.Key == s.forKey {
		return s.book
	}
	s.forKey = o.Key
	if o.Data == nil {
		s.book = nil
		return nil
	}
	b, err := Parse(o.Data)
	if err != nil {
		s.log.Error("lorebook reload failed; keeping the previous one", "file", o.File, "err", err)
		return s.book
	}
	s.book = b
	return b
}

// Turn is what a slot asks for: the turn of a channel.
type Turn struct {
	Owner   Owner
	Channel string
	// ID tells one turn of the channel from the next (its message and
	// time): the two slots of a turn share one scan.
	ID   string
	User string // the name {{user}} stands for
	// Budget is the slot's token budget, Count counts tokens.
	Budget int
	// Window is the model's context window in tokens (0: not known; the
	// share is then taken of agent.context_budget).
	Window int
	Count  func(string) int
	// Recent returns the channel's last n messages of conversation, newest
	// first, each "name: text".
	Recent func(n int) ([]string, error)
}

// Slot is what one slot shows: its text, the entries of its position that
// matched (in the prompt or not, with why), and — for the slot after the
// definition — a note on the whole scan.
type Slot struct {
	Body    string
	Matched []Fired
	Note    string
}

// Fill scans (or, for the second slot of the same turn, reuses the scan
// of) the turn's channel and returns the slot at pos. The slot After is
// the turn's last: its scan is forgotten then.
func (s *Source) Fill(pos Position, t Turn) (Slot, error) {
	last := pos == After
	s.mu.Lock()
	sc, ok := s.turns[t.Channel]
	if last {
		delete(s.turns, t.Channel)
	}
	s.mu.Unlock()
	if !ok || sc.key != t.ID {
		var err error
		if sc, err = s.scan(t); err != nil {
			return Slot{}, err
		}
		if !last {
			s.mu.Lock()
			s.turns[t.Channel] = sc
			s.mu.Unlock()
		}
	}
	if sc.book == nil {
		return Slot{}, nil
	}
	fired := sc.res.After
	if pos == Before {
		fired = sc.res.Before
	}
	out := Slot{Body: Render(fired)}
	for _, f := range sc.res.Matched {
		if f.Entry.Position == pos {
			out.Matched = append(out.Matched, f)
		}
	}
	if pos == After {
		name := sc.book.Name
		if name == "" {
			name = t.Owner.File
		}
		out.Note = fmt.Sprintf("lorebook %q: %d entries, %d matched in the last %d messages, %d in the prompt (%d tokens, budget %d)",
			name, len(sc.book.Entries), len(sc.res.Matched), sc.res.Scanned, len(sc.res.Before)+len(sc.res.After), sc.res.Used, sc.res.Budget)
	}
	return out, nil
}

func (s *Source) scan(t Turn) (scan, error) {
	book := s.bookOf(t.Owner)
	sc := scan{key: t.ID, book: book}
	if book == nil {
		return sc, nil
	}
	var lines []string
	if depth := book.Depth(); depth > 0 {
		var err error
		if lines, err = t.Recent(depth); err != nil {
			return sc, fmt.Errorf("lorebook: read the conversation: %w", err)
		}
	}
	sc.res = book.Activate(Input{Messages: lines, Char: t.Owner.Char, User: t.User,
		Budget: min(s.room(book, t.Window), t.Budget), Count: t.Count, Rand: s.rand})
	return sc, nil
}
