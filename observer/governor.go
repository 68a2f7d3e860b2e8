package observer

import (
	"context"
	"errors"
	"fmt"
	"github.com/cyan-agent/cyan/clock"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/llm"
)

// ErrOverBudget is returned for a call an observer may not make: its own or
// the daemon's daily token budget for background work is spent.
var ErrOverBudget = errors.New("observer: token budget spent")

// BudgetError says which budget is spent and when the next window opens.
type BudgetError struct {
	Account string
	Spent   int
	Budget  int
	Until   time.Time
	Daemon  bool // the daemon-wide budget, not the observer's own
}

func (e *BudgetError) Error() string {
	which := fmt.Sprintf("observer %q spent its %d-token budget for the day (%d used)", e.Account, e.Budget, e.Spent)
	if e.Daemon {
		which = fmt.Sprintf("background work spent the daemon's %d-token budget for the day (%d used)", e.Budget, e.Spent)
	}
	return which + "; it resumes at " + e.Until.Format("2006-01-02 15:04")
}

func (e *BudgetError) Unwrap() error { return ErrOverBudget }

// Governor counts the tokens background work spends, per observer and in
// all, from provider usage, in daily windows of the clock's local time.
type Governor struct {
	clock clock.Clock
	total int                              // the daemon-wide budget; 0: none
	save  func(day, account string, n int) // persists a count (may be nil)

	mu      sync.Mutex
	day     string // the window, "2006-01-02"
	budgets map[string]int
	spent   map[string]int
	all     int
}

// NewGovernor makes a governor with a daemon-wide budget (0: none). load
// returns the counts already spent in a day (after a restart); save keeps
// them. Both may be nil.
func NewGovernor(clk clock.Clock, total int, load func(day string) map[string]int, save func(day, account string, n int)) *Governor {
	g := &Governor{clock: clk, total: total, save: save, budgets: map[string]int{}, spent: map[string]int{}}
	g.day = dayOf(clk.Now())
	if load != nil {
		for k, v := range load(g.day) {
			g.spent[k] = v
			g.all += v
		}
	}
	return g
}

func dayOf(t time.Time) string { return t.Format("2006-01-02") }

// nextWindow is when the window containing t ends.
func nextWindow(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, t.Location())
}

// roll starts a new window when the day changed. Callers hold g.mu.
func (g *Governor) roll() {
	if d := dayOf(g.clock.Now()); d != g.day {
		g.day, g.spent, g.all = d, map[string]int{}, 0
	}
}

// SetBudget sets an account's daily budget (0: none of its own).
func (g *Governor) SetBudget(account string, tokens int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if tokens <= 0 {
		delete(g.budgets, account)
		return
	}
	g.budgets[account] = tokens
}

// Check returns a *BudgetError when account may not spend more today.
func (g *Governor) Check(account string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.roll()
	until := nextWindow(g.clock.Now())
	if b := g.budgets[account]; b > 0 && g.spent[account] >= b {
		return &BudgetError{Account: account, Spent: g.spent[account], Budget: b, Until: until}
	}
	if g.total > 0 && g.all >= g.total {
		return &BudgetError{Account: account, Spent: g.all, Budget: g.total, Until: until, Daemon: true}
	}
	return nil
}

// Charge counts tokens spent by account.
func (g *Governor) Charge(account string, tokens int) {
	if tokens <= 0 {
		return
	}
	g.mu.Lock()
	g.roll()
	g.spent[account] += tokens
	g.all += tokens
	n, day := g.spent[account], g.day
	g.mu.Unlock()
	if g.save != nil {
		g.save(day, account, n)
	}
}

// Spent returns what account spent today, its budget (0: none) and when
// the window ends.
func (g *Governor) Spent(account string) (spent, budget int, until time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.roll()
	return g.spent[account], g.budgets[account], nextWindow(g.clock.Now())
}

type accountKey struct{}

// WithAccount marks ctx as background work of an observer: LLM calls made
// with it through a metered client are charged to that observer.
func WithAccount(ctx context.Context, account string) context.Context {
	return context.WithValue(ctx, accountKey{}, account)
}

// AccountOf returns the observer ctx belongs to ("" for foreground work).
func AccountOf(ctx context.Context) string {
	s, _ := ctx.Value(accountKey{}).(string)
	return s
}

// Meter wraps an LLM client so that calls made for an observer (a context
// from WithAccount) are refused once its budget is spent and charged with
// the usage the provider reports. Foreground calls pass untouched.
func Meter(c llm.Client, g *Governor) llm.Client { return metered{c, g} }

type metered struct {
	llm.Client
	g *Governor
}

func (m metered) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	acct := AccountOf(ctx)
	if acct == "" {
		return m.Client.Chat(ctx, req)
	}
	if err := m.g.Check(acct); err != nil {
		return nil, err
	}
	resp, err := m.Client.Chat(ctx, req)
	if resp != nil {
		m.g.Charge(acct, resp.Usage.InputTokens+resp.Usage.OutputTokens)
	}
	return resp, err
}

func (m metered) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	acct := AccountOf(ctx)
	if acct == "" {
		return m.Client.Stream(ctx, req, onDelta)
	}
	if err := m.g.Check(acct); err != nil {
		return nil, err
	}
	resp, err := m.Client.Stream(ctx, req, onDelta)
	if resp != nil {
		m.g.Charge(acct, resp.Usage.InputTokens+resp.Usage.OutputTokens)
	}
	return resp, err
}
