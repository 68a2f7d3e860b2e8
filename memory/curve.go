package memory

import (
	"fmt"
	"math"
)

// Curve is a forgetting curve: the retrievability R of an item dt turns
// after its last review, given its stability S (in turns). Every curve here
// has R(S, S) = 0.9: S is the number of turns after which R falls to 90%.
type Curve interface {
	R(dt, s float64) float64
	Name() string
}

// Qinglan is the seed's curve, the default: R = 0.9^(Δt/S).
type Qinglan struct{}

// R implements Curve.
func (Qinglan) R(dt, s float64) float64 {
	if dt <= 0 {
		return 1
	}
	return positive(math.Exp(ln09 * dt / s))
}

// ln09 is ln 0.9: 0.9^x = e^(x·ln 0.9), which is cheaper than math.Pow.
var ln09 = math.Log(0.9)

// positive keeps R inside (0, 1] where float64 underflows to 0 after a very
// long time: R only approaches 0.
func positive(r float64) float64 {
	if r <= 0 || math.IsNaN(r) {
		return math.SmallestNonzeroFloat64
	}
	return r
}

// Name implements Curve.
func (Qinglan) Name() string { return "qinglan" }

// FSRS6 is FSRS-6's power-law forgetting curve,
// R = (1 + f·Δt/S)^(−w20) with f = 0.9^(−1/w20) − 1, so that R(S) = 0.9.
// It forgets faster than the exponential at first and slower later.
type FSRS6 struct {
	// W20 is the decay parameter; 0 means FSRS-6's default, 0.1542.
	W20 float64
}

// DefaultW20 is FSRS-6's default decay parameter w20.
const DefaultW20 = 0.1542

// R implements Curve.
func (c FSRS6) R(dt, s float64) float64 {
	if dt <= 0 {
		return 1
	}
	w := c.W20
	if w <= 0 {
		w = DefaultW20
	}
	f := math.Pow(0.9, -1/w) - 1
	return positive(math.Pow(1+f*dt/s, -w))
}

// Name implements Curve.
func (FSRS6) Name() string { return "fsrs6" }

// CurveByName returns the curve a config names.
func CurveByName(name string) (Curve, error) {
	switch name {
	case "", "qinglan":
		return Qinglan{}, nil
	case "fsrs6":
		return FSRS6{}, nil
	}
	return nil, fmt.Errorf("memory: unknown curve %q; use qinglan or fsrs6", name)
}
