package limitproc

import (
	"fmt"
	"github.com/cyan-agent/cyan/glob"
	"regexp"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/packets"
)

type forbidden struct {
	res   []*regexp.Regexp
	hold  int   // runes a holdback keeps back: the longest match, plus one
	holds []int // the same for each pattern
}

func newForbidden(c config.Limits) (Stage, error) {
	if len(c.Forbidden) == 0 {
		return nil, nil
	}
	s := &forbidden{}
	for _, f := range c.Forbidden {
		re, err := regexp.Compile(f)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", f, err)
		}
		s.res = append(s.res, re)
		n, ok := maxMatch(f)
		if !ok {
			n = UnboundedHold
		}
		s.hold = max(s.hold, n+1) // one more for a boundary or "$" after the match
		s.holds = append(s.holds, n+1)
	}
	return s, nil
}

func (*forbidden) Name() string { return "forbidden" }

func (s *forbidden) Output(_ Turn, parts []string) ([]string, string) {
	hits := 0
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		for _, re := range s.res {
			p = re.ReplaceAllStringFunc(p, func(string) string { hits++; return "[removed]" })
		}
		out = append(out, p) // as the stream shows it (Holdback): "[removed]" alone stays
	}
	if hits == 0 {
		return parts, ""
	}
	return out, fmt.Sprintf("%d forbidden pattern match(es) were removed from your answer before it was sent; do not write such text.", hits)
}

type outputLength struct{ max int }

func newOutputLength(c config.Limits) (Stage, error) {
	if c.MaxOutputChars <= 0 {
		return nil, nil
	}
	return &outputLength{max: c.MaxOutputChars}, nil
}

func (*outputLength) Name() string { return "output_length" }

func (s *outputLength) Output(_ Turn, parts []string) ([]string, string) {
	total := 0
	for _, p := range parts {
		total += utf8.RuneCountInString(p)
	}
	if total <= s.max {
		return parts, ""
	}
	left := s.max
	var out []string
	for _, p := range parts {
		if left <= 0 {
			break
		}
		n := utf8.RuneCountInString(p)
		if n > left {
			p = packets.CutText(p, left)
		}
		out = append(out, p)
		left -= n
	}
	return out, fmt.Sprintf("your answer had %d characters and was cut to %d; answer more briefly.", total, s.max)
}

// window counts events per key over a sliding span.
type window struct {
	span time.Duration
	mu   sync.Mutex
	seen map[string][]time.Time
}

func newWindow(span time.Duration) *window {
	return &window{span: span, seen: map[string][]time.Time{}}
}

// count drops the old events of key and returns how many remain.
func (w *window) count(key string, now time.Time) int {
	ts := w.seen[key]
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= w.span {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(w.seen, key)
	} else {
		w.seen[key] = ts
	}
	return len(ts)
}

func (w *window) add(key string, now time.Time) { w.seen[key] = append(w.seen[key], now) }

type messageRate struct {
	max int
	w   *window
}

func newMessageRate(c config.Limits) (Stage, error) {
	if c.MessagesPerMinute <= 0 {
		return nil, nil
	}
	return &messageRate{max: c.MessagesPerMinute, w: newWindow(time.Minute)}, nil
}

func (*messageRate) Name() string { return "message_rate" }

// Admit refuses a turn while the channel has had its messages for the
// minute: the answer would be dropped, so the model is not asked, and the
// caller learns when the limit lifts.
func (s *messageRate) Admit(t Turn) (time.Duration, string) {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	if n := s.w.count(t.Channel, t.Now); n < s.max {
		return 0, ""
	}
	oldest := s.w.seen[t.Channel][0]
	wait := max(oldest.Add(s.w.span).Sub(t.Now), time.Second)
	return wait, fmt.Sprintf("the companion has said %d messages in this channel in the last minute, its limit (limits.messages_per_minute); it answers again in %s", s.max, wait.Round(time.Second))
}

func (s *messageRate) Output(t Turn, parts []string) ([]string, string) {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	n := s.w.count(t.Channel, t.Now)
	var out []string
	for _, p := range parts {
		if n >= s.max {
			break
		}
		out = append(out, p)
		s.w.add(t.Channel, t.Now)
		n++
	}
	if dropped := len(parts) - len(out); dropped > 0 {
		return out, fmt.Sprintf("%d of your messages were not sent: at most %d messages a minute in this channel. Say less, or wait.", dropped, s.max)
	}
	return parts, ""
}

type toolGate struct{ deny []string }

func newToolGate(c config.Limits) (Stage, error) {
	if len(c.DenyTools) == 0 {
		return nil, nil
	}
	return &toolGate{deny: c.DenyTools}, nil
}

func (*toolGate) Name() string { return "tool_gate" }

func (s *toolGate) Call(_ Turn, tool string) string {
	for _, g := range s.deny {
		if glob.Path(g, tool) {
			return fmt.Sprintf("the limit-process does not let %s run (limits.deny_tools); do not call it.", tool)
		}
	}
	return ""
}

type toolRate struct {
	max int
	w   *window
}

func newToolRate(c config.Limits) (Stage, error) {
	if c.ToolCallsPerMinute <= 0 {
		return nil, nil
	}
	return &toolRate{max: c.ToolCallsPerMinute, w: newWindow(time.Minute)}, nil
}

func (*toolRate) Name() string { return "tool_rate" }

func (s *toolRate) Call(t Turn, tool string) string {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	if s.w.count(t.Channel, t.Now) >= s.max {
		return fmt.Sprintf("%s did not run: at most %d tool calls a minute in this channel. Wait before calling tools again.", tool, s.max)
	}
	s.w.add(t.Channel, t.Now)
	return ""
}

type tokenBudget struct {
	budgets map[string]int
	mu      sync.Mutex
	spent   map[string][]spend
}

type spend struct {
	at     time.Time
	tokens int
}

func newTokenBudget(c config.Limits) (Stage, error) {
	if len(c.TokenBudgets) == 0 {
		return nil, nil
	}
	return &tokenBudget{budgets: c.TokenBudgets, spent: map[string][]spend{}}, nil
}

func (*tokenBudget) Name() string { return "token_budget" }

func (s *tokenBudget) used(p string, now time.Time) int {
	list := s.spent[p]
	i := 0
	for i < len(list) && now.Sub(list[i].at) >= time.Hour {
		i++
	}
	list = list[i:]
	s.spent[p] = list
	total := 0
	for _, x := range list {
		total += x.tokens
	}
	return total
}

func (s *tokenBudget) Spend(t Turn, tokens int) string {
	p := t.process()
	budget, ok := s.budgets[p]
	if !ok || budget <= 0 {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.used(p, t.Now)
	s.spent[p] = append(s.spent[p], spend{t.Now, tokens})
	if after := before + tokens; after > budget && before <= budget {
		return fmt.Sprintf("%s used %d tokens in the last hour, over its budget of %d: tool calls are held until usage falls below it. Finish with a short answer.", p, after, budget)
	}
	return ""
}

func (s *tokenBudget) Call(t Turn, tool string) string {
	p := t.process()
	budget, ok := s.budgets[p]
	if !ok || budget <= 0 {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if used := s.used(p, t.Now); used > budget {
		return fmt.Sprintf("%s did not run: %s is over its token budget (%d of %d tokens in the last hour).", tool, p, used, budget)
	}
	return ""
}
