package notation

import "testing"

func TestLineRange(t *testing.T) {
	for _, tc := range []struct {
		in       string
		from, to int
		ok       bool
	}{
		{"Line 2 ~ Line 4", 2, 4, true},
		{"line 3～line 3", 3, 3, true},
		{"Line 5 - Line 1", 5, 1, true},
		{"page 2", 0, 0, false},
		{"Line 2 ~ 4", 0, 0, false},
		{"", 0, 0, false},
	} {
		from, to, ok := LineRange(tc.in)
		if from != tc.from || to != tc.to || ok != tc.ok {
			t.Errorf("LineRange(%q) = %d, %d, %v", tc.in, from, to, ok)
		}
	}
}
