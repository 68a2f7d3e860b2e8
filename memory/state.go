package memory

import "math"

// Difficulties of a review (SPEC §3): an item the answer used, and one it
// may use next.
const (
	DUsed  = 0.0
	DMaybe = 0.7
	// dJump is added to D when the item was last reviewed fewer than
	// max_jump_large turns ago.
	dJump = 2.0
)

// State is an item's memory state. R is not stored: it follows from S and
// the turns since LastT (State.Retrievability).
type State struct {
	S     float64 `json:"S"`      // stability, in turns
	D     float64 `json:"D"`      // the difficulty of the last review
	A     float64 `json:"a"`      // gain
	LastT int64   `json:"last_T"` // the turn of the last review
	// Last is the state recorded at the last review.
	Last *Compressed `json:"last_compressed_state,omitempty"`
}

// Compressed is last_compressed_state: the state at the last review.
type Compressed struct {
	// R is the retrievability the item had when it was reviewed (before the
	// review reset it to 1).
	R float64 `json:"R"`
	// S is the stability the review left it with.
	S float64 `json:"S"`
	// LastTDistance is the turns between that review and the one before.
	LastTDistance int64   `json:"last_T_distance"`
	D             float64 `json:"D"` // the difficulty the review used (with +2 under max_jump_large)
	A             float64 `json:"a"`
}

// Params are the tunables of the review law (config memory:).
type Params struct {
	Gain         float64 // a of a new item
	MaxJumpMini  int64   // a review sooner than this many turns does not grow S
	MaxJumpLarge int64   // a review sooner than this grows S as if D were D+2
}

// Retrievability is R at turn t under curve c.
func (s State) Retrievability(c Curve, t int64) float64 {
	return c.R(float64(t-s.LastT), s.S)
}

// Review applies one review at turn t with difficulty d (DUsed or DMaybe),
// exactly as SPEC §3 says:
//
//	Δt = t − last_T;  R = curve(Δt, S)
//	Δt < max_jump_mini:  S stays as it was
//	Δt < max_jump_large: S ← S·(1 + a·e^(−(D+2))·(1 − R))
//	otherwise:           S ← S·(1 + a·e^(−D)·(1 − R))
//
// then last_compressed_state ← {R, S (new), last_T_distance = Δt, D used, a},
// D ← d and last_T ← t. S never shrinks.
func (s State) Review(c Curve, p Params, t int64, d float64) State {
	dt := t - s.LastT
	if dt < 0 {
		dt = 0
	}
	r := c.R(float64(dt), s.S)
	used := d
	newS := s.S
	switch {
	case dt < p.MaxJumpMini:
	case dt < p.MaxJumpLarge:
		used = d + dJump
		newS = s.S * (1 + s.A*math.Exp(-used)*(1-r))
	default:
		newS = s.S * (1 + s.A*math.Exp(-used)*(1-r))
	}
	if newS < s.S || math.IsNaN(newS) {
		newS = s.S
	}
	return State{
		S: newS, D: d, A: s.A, LastT: t,
		Last: &Compressed{R: r, S: newS, LastTDistance: dt, D: used, A: s.A},
	}
}
