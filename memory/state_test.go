package memory

import (
	"math"
	"math/rand/v2"
	"testing"
)

var params = Params{Gain: 5, MaxJumpMini: 3, MaxJumpLarge: 8}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestQinglanR(t *testing.T) {
	tests := []struct{ dt, s, want float64 }{
		{0, 10, 1},
		{10, 10, 0.9},
		{20, 10, 0.81},
		{5, 10, 0.9486832980505138}, // 0.9^0.5
		{12, 4, 0.729},              // 0.9^3
		{2, 10, 0.9791483623609768}, // 0.9^0.2
	}
	for _, tt := range tests {
		if got := (Qinglan{}).R(tt.dt, tt.s); !near(got, tt.want) {
			t.Errorf("R(Δt=%v, S=%v) = %v, want %v", tt.dt, tt.s, got, tt.want)
		}
	}
}

// TestFSRS6R checks the FSRS-6 curve R = (1 + f·t/S)^(−w20),
// f = 0.9^(−1/w20) − 1, at the published default w20 = 0.1542 (values
// computed independently from the published formula).
func TestFSRS6R(t *testing.T) {
	tests := []struct{ dt, s, want float64 }{
		{1, 1, 0.9},
		{10, 1, 0.6928266345726217},
		{100, 1, 0.4923224255829389},
		{30, 10, 0.8093881035731708},
		{1, 10, 0.9856824087775146},
		{0, 3, 1},
	}
	for _, tt := range tests {
		if got := (FSRS6{}).R(tt.dt, tt.s); !near(got, tt.want) {
			t.Errorf("fsrs6 R(Δt=%v, S=%v) = %v, want %v", tt.dt, tt.s, got, tt.want)
		}
	}
}

func TestReview(t *testing.T) {
	base := State{S: 10, A: 5, LastT: 0}
	tests := []struct {
		name      string
		t         int64
		d         float64
		wantS     float64
		wantR     float64 // recorded in last_compressed_state
		wantDUsed float64
	}{
		{"used, D=0: S·(1+5·1·0.19)", 20, DUsed, 19.5, 0.81, 0},
		{"may be used, D=0.7: S·(1+5·e^-0.7·0.19)", 20, DMaybe, 14.717560386018391, 0.81, 0.7},
		{"under max_jump_mini: no growth", 2, DUsed, 10, 0.9791483623609768, 0},
		{"under max_jump_large: D+2", 5, DUsed, 10.34724801965513, 0.9486832980505138, 2},
		{"at max_jump_large: full growth", 8, DUsed, 10 * (1 + 5*(1-math.Pow(0.9, 0.8))), math.Pow(0.9, 0.8), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := base.Review(Qinglan{}, params, tt.t, tt.d)
			if !near(got.S, tt.wantS) || got.LastT != tt.t || got.D != tt.d || got.A != 5 {
				t.Fatalf("state = %+v, want S=%v last_T=%d", got, tt.wantS, tt.t)
			}
			l := got.Last
			if l == nil || !near(l.R, tt.wantR) || !near(l.S, tt.wantS) || l.LastTDistance != tt.t || !near(l.D, tt.wantDUsed) || l.A != 5 {
				t.Fatalf("last_compressed_state = %+v", l)
			}
		})
	}
}

func TestTwoReviews(t *testing.T) {
	s := State{S: 10, A: 5, LastT: 0}
	s = s.Review(Qinglan{}, params, 20, DUsed)  // S = 19.5
	s = s.Review(Qinglan{}, params, 25, DMaybe) // Δt 5 < 8: D+2 = 2.7
	want := Compressed{R: 0.9733461381554042, S: 19.674650429046643, LastTDistance: 5, D: 2.7, A: 5}
	if l := s.Last; !near(l.R, want.R) || !near(l.S, want.S) || l.LastTDistance != 5 || !near(l.D, 2.7) || l.A != 5 {
		t.Fatalf("after two reviews: %+v, want %+v", *l, want)
	}
	if !near(s.S, want.S) || s.LastT != 25 || s.D != DMaybe {
		t.Fatalf("state after two reviews: %+v", s)
	}
}

// TestProperties checks, over random states, that R ∈ (0, 1], R never
// rises with Δt, and a review never shrinks S — for both curves.
func TestProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []Curve{Qinglan{}, FSRS6{}} {
		for range 5000 {
			s := 0.1 + rng.Float64()*1000
			dt := rng.Float64() * 10000
			r := c.R(dt, s)
			if r <= 0 || r > 1 || math.IsNaN(r) {
				t.Fatalf("%s: R(%v, %v) = %v out of (0, 1]", c.Name(), dt, s, r)
			}
			if r2 := c.R(dt+rng.Float64()*100, s); r2 > r {
				t.Fatalf("%s: R rose with Δt: %v → %v", c.Name(), r, r2)
			}
			st := State{S: s, A: rng.Float64() * 10, LastT: rng.Int64N(1000)}
			at := st.LastT + rng.Int64N(500)
			d := []float64{DUsed, DMaybe}[rng.IntN(2)]
			if got := st.Review(c, params, at, d); got.S < st.S {
				t.Fatalf("%s: review shrank S: %v → %v", c.Name(), st.S, got.S)
			}
		}
	}
}
