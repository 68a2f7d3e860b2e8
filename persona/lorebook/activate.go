package lorebook

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/cyan-agent/cyan/notation"
)

// Input is what one scan looks at.
type Input struct {
	// Messages are the recent conversation, newest first, each written
	// "name: text" (SillyTavern scans names too).
	Messages []string
	// Char and User are the names {{char}} and {{user}} stand for.
	Char, User string
	// Budget is the caller's token budget for the fired entries; 0 or less
	// leaves only the book's own.
	Budget int
	// Count counts the tokens of a text; nil counts 1 per 4 bytes.
	Count func(string) int
	// Rand returns a number in [0, 1) for probability rolls; nil uses
	// math/rand/v2.
	Rand func() float64
}

// Fired is an entry that matched in a scan.
type Fired struct {
	Entry *Entry
	// Text is the content as it enters the prompt: macros replaced and
	// escaped (notation.Escape), so it cannot pose as a platform line.
	Text   string
	Tokens int
	// Why says what made it match.
	Why string
	// Included is true when it is in the prompt; Dropped says why not.
	Included bool
	Dropped  string
	// Pass is 0 for a match in the conversation, n for the nth recursive
	// scan of fired entries' content.
	Pass int
}

// Reason is Why and, for an entry left out, why it was.
func (f Fired) Reason() string {
	r := f.Why
	if f.Dropped != "" {
		r += "; left out: " + f.Dropped
	}
	if f.Included && f.Entry.PositionNote != "" {
		r += "; " + f.Entry.PositionNote
	}
	return r
}

// Result is one scan's outcome.
type Result struct {
	// Before and After are the entries in the prompt, in insertion order,
	// before and after the character's definition.
	Before, After []Fired
	// Matched is every entry that matched, in or out of the prompt, in the
	// order they were decided.
	Matched []Fired
	// Scanned is how many messages the scan read; Budget the token budget
	// applied (0: none) and Used the tokens of the entries in the prompt.
	Scanned, Budget, Used int
	Passes                int
}

// DefaultSharePercent is the share of the model's context SillyTavern
// gives World Info by default (world_info_budget: 25 %; its
// public/scripts/world-info.js sets the budget to
// Math.round(world_info_budget * maxContext / 100), maxContext being the
// model's context size): a book with no token_budget of its own gets as
// much.
const DefaultSharePercent = 25

// Room is the tokens b's entries may take in a prompt sent to a model whose
// context window is context tokens (when the window is not known, the
// caller passes agent.context_budget): the book's token_budget, else
// SillyTavern's default share of the window. configured
// (agent.sections.lorebook), when above 0, is the owner's bound on both.
func (b *Book) Room(configured, context int) int {
	room := b.TokenBudget
	if room <= 0 {
		room = context * DefaultSharePercent / 100
	}
	if configured > 0 {
		room = min(room, configured)
	}
	return max(room, 0)
}

// Depth is how many of the newest messages a scan of b may read: the
// largest scan depth of the book and its entries.
func (b *Book) Depth() int {
	d := b.ScanDepth
	for _, e := range b.Entries {
		d = max(d, e.ScanDepth)
	}
	return d
}

// Activate scans the conversation and decides which entries enter the
// prompt (see the package documentation for the rules).
func (b *Book) Activate(in Input) Result {
	if in.Count == nil {
		in.Count = func(s string) int { return (len(s) + 3) / 4 }
	}
	if in.Rand == nil {
		in.Rand = rand.Float64
	}
	budget := in.Budget
	if b.TokenBudget > 0 && (budget <= 0 || b.TokenBudget < budget) {
		budget = b.TokenBudget
	}
	res := Result{Budget: max(budget, 0), Scanned: min(len(in.Messages), b.Depth())}

	// The text each scan depth sees, made once.
	texts := map[int]text{}
	scanText := func(depth int, recursed string) text {
		if depth <= 0 {
			return text{}
		}
		t, ok := texts[depth]
		if !ok {
			t = newText(strings.Join(in.Messages[:min(depth, len(in.Messages))], "\n"))
			texts[depth] = t
		}
		if recursed == "" {
			return t
		}
		return newText(t.raw + "\n" + recursed)
	}

	decided := map[*Entry]bool{}
	var recursed strings.Builder
	overflow := false
	for pass := 0; pass <= len(b.Entries); pass++ {
		res.Passes = pass + 1
		var now []Fired
		for _, e := range b.Entries {
			if decided[e] || !e.Enabled || pass > 0 && e.ExcludeRecursion || pass == 0 && e.DelayUntilRecursion {
				continue
			}
			why := ""
			switch {
			case e.activate:
				why = "@@activate"
			case e.dontActivate:
				continue
			case e.Constant:
				why = "constant"
			default:
				depth := b.ScanDepth
				if e.ScanDepth >= 0 {
					depth = e.ScanDepth
				}
				if depth <= 0 {
					continue
				}
				why = e.why(scanText(depth, recursed.String()), in.Char, in.User)
				if why == "" {
					continue
				}
				if pass == 0 {
					why += fmt.Sprintf(" in the last %d message%s", min(depth, len(in.Messages)), plural(min(depth, len(in.Messages))))
				} else {
					why += " in the content of entries fired before (recursive scan)"
				}
			}
			now = append(now, Fired{Entry: e, Why: why, Pass: pass})
		}
		if len(now) == 0 {
			break
		}
		// Under the budget constant entries are kept first (they are the
		// book's standing world), then the highest priority.
		slices.SortStableFunc(now, func(x, y Fired) int {
			return cmp.Or(cmp.Compare(rankConstant(y.Entry), rankConstant(x.Entry)),
				cmp.Compare(y.Entry.keep(), x.Entry.keep()), cmp.Compare(x.Entry.Index, y.Entry.Index))
		})
		var next strings.Builder
		for _, f := range now {
			e := f.Entry
			decided[e] = true
			if e.UseProbability && e.Probability < 100 {
				roll := in.Rand() * 100
				if roll > e.Probability {
					f.Dropped = fmt.Sprintf("probability %v%%, rolled %.1f", e.Probability, roll)
					res.Matched = append(res.Matched, f)
					continue
				}
				f.Why += fmt.Sprintf("; probability %v%%, rolled %.1f", e.Probability, roll)
			}
			content := strings.TrimSpace(Substitute(e.Content, in.Char, in.User))
			if content == "" {
				f.Dropped = "its content is empty"
				res.Matched = append(res.Matched, f)
				continue
			}
			f.Text = notation.Escape(content)
			f.Tokens = in.Count(f.Text)
			if budget > 0 && res.Used+f.Tokens > budget {
				f.Dropped = fmt.Sprintf("over the token budget (needs %d, %d of %d left)", f.Tokens, budget-res.Used, budget)
				overflow = true
				res.Matched = append(res.Matched, f)
				continue
			}
			res.Used += f.Tokens
			f.Included = true
			res.Matched = append(res.Matched, f)
			if !e.PreventRecursion {
				next.WriteString(content)
				next.WriteByte('\n')
			}
		}
		if !b.Recursive || overflow || next.Len() == 0 {
			break
		}
		recursed.WriteString(next.String())
	}

	var kept []Fired
	for _, f := range res.Matched {
		if f.Included {
			kept = append(kept, f)
		}
	}
	slices.SortStableFunc(kept, func(x, y Fired) int {
		return cmp.Or(cmp.Compare(x.Entry.Order, y.Entry.Order), cmp.Compare(x.Entry.Index, y.Entry.Index))
	})
	for _, f := range kept {
		if f.Entry.Position == Before {
			res.Before = append(res.Before, f)
		} else {
			res.After = append(res.After, f)
		}
	}
	return res
}

func rankConstant(e *Entry) int {
	if e.Constant {
		return 1
	}
	return 0
}

// ConstantTokens is what the book's enabled constant entries take together
// (count counts a text's tokens; nil counts 1 per 4 bytes), with {{char}}
// and {{user}} as written: the room the book needs before any key matches.
func (b *Book) ConstantTokens(count func(string) int) int {
	if count == nil {
		count = func(s string) int { return (len(s) + 3) / 4 }
	}
	n := 0
	for _, e := range b.Entries {
		if e.Enabled && e.Constant && !e.dontActivate {
			n += count(notation.Escape(strings.TrimSpace(e.Content)))
		}
	}
	return n
}

// keep is the entry's rank under the token budget: higher is kept first.
func (e *Entry) keep() float64 {
	if e.Priority != nil {
		return *e.Priority
	}
	return e.Order
}

// why checks the entry's keys against t and says why it matched ("" when
// it did not).
func (e *Entry) why(t text, char, user string) string {
	k, ok := e.firstMatch(e.Keys, t, char, user)
	if !ok {
		return ""
	}
	why := "key " + quote(k)
	sec, ok := e.secondary(t, char, user)
	if !ok {
		return ""
	}
	if sec != "" {
		why += ", " + sec
	}
	if len(e.additional) > 0 {
		k, ok := e.firstMatch(e.additional, t, char, user)
		if !ok {
			return ""
		}
		why += ", additional key " + quote(k)
	}
	if _, ok := e.firstMatch(e.exclude, t, char, user); ok {
		return ""
	}
	return why
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Render joins fired entries' texts for the prompt, one per line as
// SillyTavern does.
func Render(fired []Fired) string {
	parts := make([]string, 0, len(fired))
	for _, f := range fired {
		parts = append(parts, f.Text)
	}
	return strings.Join(parts, "\n")
}
