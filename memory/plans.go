package memory

import (
	"fmt"
	"github.com/cyan-agent/cyan/clock"
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
	// A deferred plan waits for a time: At once, or every time Cron
	// matches. main-observer wakes main-virtual in the plan's channel when
	// it is due; a one-off plan then becomes a current one (At cleared).
	At   *time.Time `json:"at,omitempty"`
	Cron string     `json:"cron,omitempty"`
}

// Deferred reports whether the plan waits for a time.
func (p Plan) Deferred() bool { return p.At != nil || p.Cron != "" }

// When says when a deferred plan is due, for prompts and listings.
func (p Plan) When() string {
	switch {
	case p.At != nil:
		return "due " + p.At.Format("2006-01-02 15:04")
	case p.Cron != "":
		return "due on cron " + p.Cron
	}
	return ""
}

// CreatePlan adds a plan; at (RFC3339, in the future) or cronExpr makes it
// a deferred one. Both empty: a current plan.
func (m *Memory) CreatePlan(text string, origin Origin, at, cronExpr string) (*Plan, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, fmt.Errorf("memory: a plan needs text")
	}
	p := &Plan{Text: text, Origin: origin, Created: m.now()}
	switch at, cronExpr = strings.TrimSpace(at), strings.TrimSpace(cronExpr); {
	case at != "" && cronExpr != "":
		return nil, fmt.Errorf("memory: give a plan either at or cron, not both")
	case at != "":
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return nil, fmt.Errorf("memory: at %q is not an RFC3339 time such as 2026-11-27T09:00:00+08:00", at)
		}
		if !t.After(m.now()) {
			return nil, fmt.Errorf("memory: at %s is in the past (it is now %s)", t.Format(time.RFC3339), m.now().Format(time.RFC3339))
		}
		p.At = &t
	case cronExpr != "":
		if _, err := clock.ParseCron(cronExpr); err != nil {
			return nil, fmt.Errorf("memory: cron: %w", err)
		}
		p.Cron = cronExpr
	}
	m.mu.Lock()
	p.ID = m.newID("p")
	m.plans[p.ID] = p
	if err := m.save(nil, []*Plan{p}); err != nil {
		delete(m.plans, p.ID)
		m.mu.Unlock()
		return nil, err
	}
	cp := *p
	m.mu.Unlock()
	m.changed()
	return &cp, nil
}

// PlanFired records that a deferred plan came due: a one-off plan becomes
// a current plan; a cron plan keeps waiting for its next time.
func (m *Memory) PlanFired(id string) error {
	m.mu.Lock()
	p, ok := m.plans[id]
	if !ok || p.At == nil {
		m.mu.Unlock()
		return nil
	}
	p.At = nil
	err := m.save(nil, []*Plan{p})
	m.mu.Unlock()
	m.changed()
	return err
}

// DetailPlan adds a detail to a plan v may see.
func (m *Memory) DetailPlan(id string, v Viewer, detail string) error {
	detail = strings.TrimSpace(detail)
	if detail == "" {
		return fmt.Errorf("memory: the detail is empty")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.plans[id]
	if !ok || !v.sees(p.Origin) {
		return fmt.Errorf("%w: no plan %q", ErrNotFound, id)
	}
	p.Details = append(p.Details, detail)
	return m.save(nil, []*Plan{p})
}

// EndPlan removes a plan v may see, complete or forgotten.
func (m *Memory) EndPlan(id string, v Viewer) error {
	m.mu.Lock()
	p, ok := m.plans[id]
	if !ok || !v.sees(p.Origin) {
		m.mu.Unlock()
		return fmt.Errorf("%w: no plan %q", ErrNotFound, id)
	}
	delete(m.plans, id)
	err := m.save(nil, nil, prefixPlan+id)
	m.mu.Unlock()
	m.changed()
	return err
}

// Plans lists the plans v may see, in id order (Viewer{} lists all).
func (m *Memory) Plans(v Viewer) []Plan {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Plan
	for _, p := range m.plans {
		if v.sees(p.Origin) {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(a, b Plan) int { return compareIDs(a.ID, b.ID) })
	return out
}

// PlansSection renders the plan steps v may see.
func (m *Memory) PlansSection(v Viewer) string {
	var b strings.Builder
	for _, p := range m.Plans(v) {
		when := ""
		if p.Deferred() {
			when = " (" + p.When() + ")"
		}
		fmt.Fprintf(&b, "[%s] %s%s\n", p.ID, notation.Escape(p.Text), when)
		for _, d := range p.Details {
			fmt.Fprintf(&b, "    - %s\n", notation.Escape(d))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
