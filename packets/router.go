package packets

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Packet is the envelope the router carries: a natural or an action packet
// (exactly one), from one component to an address.
type Packet struct {
	From    string   `json:"from"`
	To      string   `json:"to"` // an address such as "tools/speak"
	Natural *Natural `json:"natural,omitempty"`
	Action  Action   `json:"action,omitempty"`
}

// Component is a part of the agent that takes packets.
type Component interface {
	Deliver(ctx context.Context, p Packet) (Result, error)
}

// ComponentFunc adapts a function to Component.
type ComponentFunc func(ctx context.Context, p Packet) (Result, error)

// Deliver implements Component.
func (f ComponentFunc) Deliver(ctx context.Context, p Packet) (Result, error) { return f(ctx, p) }

// Route sends the packets whose address matches To (a glob, see Match) —
// and, when From is set, whose sender matches From — to the components
// named in Deliver, in order.
type Route struct {
	To      string   `json:"to"`
	From    string   `json:"from,omitempty"`
	Deliver []string `json:"deliver"`
}

// Delivery is what one component made of a routed packet.
type Delivery struct {
	Component string `json:"component"`
	Result    Result `json:"result"`
	Error     string `json:"error,omitempty"`
}

// ErrNoRoute is returned for a packet no route matches.
var ErrNoRoute = errors.New("packets: no route")

// Router delivers packets to components by rule: the first route that
// matches a packet decides; every component it names gets the packet. It is
// safe for concurrent use; components come and go while it runs.
type Router struct {
	mu         sync.RWMutex
	routes     []Route
	components map[string]Component
}

// NewRouter makes a router with routes, checked in order.
func NewRouter(routes ...Route) (*Router, error) {
	for i, r := range routes {
		if r.To == "" || len(r.Deliver) == 0 {
			return nil, fmt.Errorf("packets: route %d: a route needs an address pattern (to) and at least one component (deliver)", i)
		}
		if err := checkGlob(r.To); err != nil {
			return nil, fmt.Errorf("packets: route %d: to: %w", i, err)
		}
		if err := checkGlob(r.From); r.From != "" && err != nil {
			return nil, fmt.Errorf("packets: route %d: from: %w", i, err)
		}
	}
	return &Router{routes: routes, components: map[string]Component{}}, nil
}

// Attach adds (or replaces) a component under a name.
func (r *Router) Attach(name string, c Component) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.components[name] = c
}

// Detach removes a component.
func (r *Router) Detach(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.components, name)
}

// Route delivers p. It fails for a malformed packet or one no route takes;
// a component's own failure is reported in its Delivery, and the other
// components still get the packet.
func (r *Router) Route(ctx context.Context, p Packet) ([]Delivery, error) {
	if (p.Natural == nil) == (p.Action == nil) {
		return nil, fmt.Errorf("%w: a packet carries exactly one of natural and action", ErrPacket)
	}
	r.mu.RLock()
	var targets []string
	for _, rt := range r.routes {
		if Match(rt.To, p.To) && (rt.From == "" || Match(rt.From, p.From)) {
			targets = rt.Deliver
			break
		}
	}
	comps := make([]Component, len(targets))
	for i, name := range targets {
		comps[i] = r.components[name]
	}
	r.mu.RUnlock()
	if targets == nil {
		return nil, fmt.Errorf("%w for %q", ErrNoRoute, p.To)
	}
	out := make([]Delivery, 0, len(targets))
	for i, name := range targets {
		d := Delivery{Component: name, Result: Result{OutputFile: []string{}}}
		switch c := comps[i]; {
		case c == nil:
			d.Error = fmt.Sprintf("component %q is not running", name)
		default:
			res, err := c.Deliver(ctx, p)
			if p.Natural != nil {
				res = p.Natural.Clip(res)
			} else {
				res = (Natural{OutputTextLimit: Unlimited}).Clip(res)
			}
			d.Result = res
			if err != nil {
				d.Error = err.Error()
			}
		}
		out = append(out, d)
	}
	return out, nil
}
