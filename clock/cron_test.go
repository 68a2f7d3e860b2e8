package clock

import (
	"strings"
	"testing"
	"time"
)

func TestParseCron(t *testing.T) {
	from := time.Date(2026, 11, 25, 8, 30, 0, 0, time.UTC)
	tests := []struct {
		name, expr string
		next       time.Time
	}{
		{"weekdays at nine", "0 9 * * 1-5", time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)},
		{"daily descriptor", "@daily", time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)},
		{"every", "@every 2h", from.Add(2 * time.Hour)},
		{"ten past midnight", "10 0 * * *", time.Date(2026, 11, 26, 0, 10, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseCron(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Next(from); !got.Equal(tt.next) {
				t.Errorf("Next = %v, want %v", got, tt.next)
			}
		})
	}
	for _, bad := range []string{"", "* * *", "0 0 0 * * *", "61 * * * *", "@fortnightly"} {
		if _, err := ParseCron(bad); err == nil || !strings.Contains(err.Error(), "five fields") {
			t.Errorf("ParseCron(%q) = %v", bad, err)
		}
	}
}
