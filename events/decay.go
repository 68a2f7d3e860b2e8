package events

import (
	"math"
	"time"
)

// DecayLaw is how a relation line's weight w ∈ [0, 1] moves. Its state is
// the weight w₀ at the last update T, the peak P (the highest weight the
// line ever reached) and the growth used in the current window.
//
// Decay depends on time only, never on how often the line is read:
//
//	h = HalfLife · (1 + Strength·P)                  (a line that grew strong decays slower)
//	above the floor F:  w(t) = w₀ · 2^(−Δt/h)
//	below the floor:    w(t) = w_F · 2^(−Δt_F/(Slowdown·h))
//
// where Δt = t − T; a line above F first decays at h down to F, reached at
// t_F = h·log₂(w₀/F), and from there Δt_F = t − T − t_F; a line already at
// or below F decays at Slowdown·h from w_F = w₀ (so a faded line fades very
// slowly and is never forgotten outright).
//
// Growth (a contact of strength g ∈ [0, 1]) first decays w to now, then
//
//	Δw = min(g·(1 − w), WindowCap − used)        (saturating; capped per window)
//	w' = w + Δw,  P' = max(P, w')
//
// where used is the growth already applied in the current window, which
// starts at the first growth after the previous window ended (Window long).
//
// With the defaults (HalfLife 30 days, Strength 2, Floor 0.1, Slowdown 10,
// Window 7 days, WindowCap 0.3): a line at 0.8 with peak 0.8 halves in
// 30·(1+1.6) = 78 days; the same weight with peak 0.4 would take 54.
type DecayLaw struct {
	HalfLife  time.Duration
	Strength  float64
	Floor     float64
	Slowdown  float64
	Window    time.Duration
	WindowCap float64
}

// DefaultDecay is the law relation lines follow unless the daemon sets
// another.
var DefaultDecay = DecayLaw{
	HalfLife: 30 * 24 * time.Hour, Strength: 2, Floor: 0.1, Slowdown: 10,
	Window: 7 * 24 * time.Hour, WindowCap: 0.3,
}

// LineState is a relation line's memory state.
type LineState struct {
	W            float64   `json:"w"`    // weight at T
	Peak         float64   `json:"peak"` // highest weight reached
	T            time.Time `json:"t"`
	WindowStart  time.Time `json:"window_start,omitzero"`
	WindowGrowth float64   `json:"window_growth,omitempty"`
}

// halfLife is h for a line of peak p.
func (law DecayLaw) halfLife(peak float64) float64 {
	return law.HalfLife.Hours() * (1 + law.Strength*peak)
}

// At is the line's weight at now.
func (law DecayLaw) At(s LineState, now time.Time) float64 {
	dt := now.Sub(s.T).Hours()
	if dt <= 0 || s.W <= 0 {
		return s.W
	}
	h := law.halfLife(s.Peak)
	slow := h * max(law.Slowdown, 1)
	w := s.W
	if w > law.Floor && law.Floor > 0 {
		tf := h * math.Log2(w/law.Floor)
		if dt <= tf {
			return w * math.Exp2(-dt/h)
		}
		dt -= tf
		w = law.Floor
	} else if law.Floor <= 0 {
		return w * math.Exp2(-dt/h)
	}
	return w * math.Exp2(-dt/slow)
}

// Grow applies a contact of strength g at now and returns the new state.
func (law DecayLaw) Grow(s LineState, now time.Time, g float64) LineState {
	w := law.At(s, now)
	if s.WindowStart.IsZero() || now.Sub(s.WindowStart) >= law.Window {
		s.WindowStart, s.WindowGrowth = now, 0
	}
	dw := min(clamp01(g)*(1-w), max(law.WindowCap-s.WindowGrowth, 0))
	s.W = min(w+dw, 1)
	s.WindowGrowth += dw
	s.Peak = max(s.Peak, s.W)
	if now.After(s.T) || s.T.IsZero() {
		s.T = now
	}
	return s
}
