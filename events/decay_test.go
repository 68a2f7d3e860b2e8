package events

import (
	"math"
	"testing"
	"time"
)

const dayDur = 24 * time.Hour

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Values below are worked by hand from the law in decay.go with the
// defaults: HalfLife 30 days, Strength 2, Floor 0.1, Slowdown 10, Window 7
// days, WindowCap 0.3. So h = 30·(1 + 2·peak) days.
func TestLineDecay(t *testing.T) {
	law := DefaultDecay
	tests := []struct {
		name  string
		w, p  float64
		after time.Duration
		want  float64
	}{
		{"no time, no decay", 0.8, 0.8, 0, 0.8},
		{"halves in h = 30·(1+1.6) = 78 days", 0.8, 0.8, 78 * dayDur, 0.4},
		{"a weaker peak halves sooner: h = 54 days", 0.4, 0.4, 54 * dayDur, 0.2},
		{"a line that grew strong decays slower: 0.4·2^(−54/90)", 0.4, 1.0, 54 * dayDur, 0.2639016},
		{"at the floor: 10× slower, h = 360 days", 0.1, 0.1, 360 * dayDur, 0.05},
		{"down to the floor in 54·log2(4) = 108 days, then 540 days at the slow rate", 0.4, 0.4, (108 + 540) * dayDur, 0.05},
		{"never quite forgotten: 0.1·2^(−(3650−108)/540) after ten years", 0.4, 0.4, 3650 * dayDur, 0.0010604},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := law.At(LineState{W: tt.w, Peak: tt.p, T: t0}, t0.Add(tt.after))
			if math.Abs(got-tt.want) > 1e-6 {
				t.Fatalf("weight = %.7f, want %.7f", got, tt.want)
			}
		})
	}
	// Decay is by time, not by use: reading the line (a growth of 0) on day
	// 10 does not change where it is on day 78.
	s := LineState{W: 0.8, Peak: 0.8, T: t0}
	read := law.Grow(s, t0.Add(10*dayDur), 0)
	if a, b := law.At(read, t0.Add(78*dayDur)), law.At(s, t0.Add(78*dayDur)); math.Abs(a-b) > 1e-9 {
		t.Fatalf("a read changed the decay: %v vs %v", a, b)
	}
}

func TestLineGrowth(t *testing.T) {
	law := DefaultDecay
	tests := []struct {
		name  string
		from  LineState
		g     float64
		at    time.Duration
		wantW float64
		wantP float64
	}{
		{"saturating: a weak line gains g·(1−w) = 0.2·0.9", LineState{W: 0.1, Peak: 0.1, T: t0}, 0.2, 0, 0.28, 0.28},
		{"saturating: a strong line gains little, 0.2·0.1", LineState{W: 0.9, Peak: 0.9, T: t0}, 0.2, 0, 0.92, 0.92},
		{"capped: one window adds at most 0.3", LineState{}, 1, 0, 0.3, 0.3},
		{"the cap counts what the window already used", LineState{W: 0.3, Peak: 0.3, T: t0, WindowStart: t0, WindowGrowth: 0.25}, 1, 0, 0.35, 0.35},
		{"the peak stays when the weight falls", LineState{W: 0.3, Peak: 0.9, T: t0}, 0, 0, 0.3, 0.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := law.Grow(tt.from, t0.Add(tt.at), tt.g)
			if math.Abs(got.W-tt.wantW) > 1e-9 || math.Abs(got.Peak-tt.wantP) > 1e-9 {
				t.Fatalf("grow → w %.7f peak %.7f, want %.7f %.7f", got.W, got.Peak, tt.wantW, tt.wantP)
			}
		})
	}

	// Three contacts of strength 0.2 within a week, then one a week later.
	// Day 0: 0 → 0.2 (window opens). Day 1: decays to 0.2·2^(−1/42) =
	// 0.1967264, could gain 0.2·0.8032736 = 0.1606547 but the window has
	// 0.1 left → 0.2967264. Day 2: the window is spent; only decay, with
	// h = 30·(1 + 2·0.2967264) = 47.80358 → 0.2924549. Day 8: a new window;
	// decayed to 0.2924549·2^(−6/47.80358) = 0.2680869, gains
	// 0.2·(1 − 0.2680869) = 0.1463826 → 0.4144695.
	s := LineState{}
	steps := []struct {
		day  int
		want float64
	}{{0, 0.2}, {1, 0.2967264}, {2, 0.2924549}, {8, 0.4144695}}
	for _, st := range steps {
		s = law.Grow(s, t0.Add(time.Duration(st.day)*dayDur), 0.2)
		if math.Abs(s.W-st.want) > 1e-6 {
			t.Fatalf("day %d: w = %.7f, want %.7f", st.day, s.W, st.want)
		}
	}
}
