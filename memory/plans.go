package memory

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/notation"
)

// Plan is a plan step of main-virtual (SPEC §2 item 7): what it means to
// get done, with details added as it goes. Plans made in a private
// conversation are shown only there.
type Plan struct {
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	Details []string  `json:"details,omitempty"`
	Origin  Origin    `json:"origin"`
	Created time.Time `json:"created"`
}

// CreatePlan adds a plan.
func (m *Memory) CreatePlan(text string, origin Origin) (*Plan, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, fmt.Errorf("memory: a plan needs text")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := &Plan{ID: m.newID("p"), Text: text, Origin: origin, Created: m.now()}
	m.plans[p.ID] = p
	if err := m.save(nil, []*Plan{p}); err != nil {
		delete(m.plans, p.ID)
		return nil, err
	}
	cp := *p
	return &cp, nil
}

// DetailPlan adds a detail to a plan.
func (m *Memory) DetailPlan(id, channel, detail string) error {
	detail = strings.TrimSpace(detail)
	if detail == "" {
		return fmt.Errorf("memory: the detail is empty")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.plans[id]
	if !ok || (p.Origin.Kind == "private" && p.Origin.Channel != channel) {
		return fmt.Errorf("%w: no plan %q", ErrNotFound, id)
	}
	p.Details = append(p.Details, detail)
	return m.save(nil, []*Plan{p})
}

// EndPlan removes a plan that is complete or forgotten.
func (m *Memory) EndPlan(id, channel string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.plans[id]
	if !ok || (p.Origin.Kind == "private" && p.Origin.Channel != channel) {
		return fmt.Errorf("%w: no plan %q", ErrNotFound, id)
	}
	delete(m.plans, id)
	return m.save(nil, nil, prefixPlan+id)
}

// Plans lists the plans channel may see, in id order ("" lists all).
func (m *Memory) Plans(channel string) []Plan {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Plan
	for _, p := range m.plans {
		if channel == "" || p.Origin.Kind != "private" || p.Origin.Channel == channel {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(a, b Plan) int { return compareIDs(a.ID, b.ID) })
	return out
}

// PlansSection renders the plan steps channel may see.
func (m *Memory) PlansSection(channel string) string {
	var b strings.Builder
	for _, p := range m.Plans(channel) {
		fmt.Fprintf(&b, "[%s] %s\n", p.ID, notation.Escape(p.Text))
		for _, d := range p.Details {
			fmt.Fprintf(&b, "    - %s\n", notation.Escape(d))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
