package observer

import (
	"fmt"
	"strings"
	"time"
)

// QuietHours is a daily span, in the clock's local time, when observers do
// not speak on their own: "23:00-07:00" runs over midnight. The zero value
// is never quiet.
type QuietHours struct {
	start, end int // minutes after midnight
	set        bool
	text       string
}

// ParseQuietHours reads "HH:MM-HH:MM" ("" means none).
func ParseQuietHours(s string) (QuietHours, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return QuietHours{}, nil
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return QuietHours{}, fmt.Errorf("quiet hours %q: write them as HH:MM-HH:MM, e.g. 23:00-07:00", s)
	}
	start, err1 := clockMinutes(a)
	end, err2 := clockMinutes(b)
	if err1 != nil || err2 != nil || start == end {
		return QuietHours{}, fmt.Errorf("quiet hours %q: write them as HH:MM-HH:MM with two different times, e.g. 23:00-07:00", s)
	}
	return QuietHours{start: start, end: end, set: true, text: s}, nil
}

func clockMinutes(s string) (int, error) {
	t, err := time.Parse("15:04", strings.TrimSpace(s))
	if err != nil {
		return 0, err
	}
	return t.Hour()*60 + t.Minute(), nil
}

// String returns the span as written.
func (q QuietHours) String() string { return q.text }

// Contains reports whether t falls in the quiet span.
func (q QuietHours) Contains(t time.Time) bool {
	if !q.set {
		return false
	}
	m := t.Hour()*60 + t.Minute()
	if q.start < q.end {
		return m >= q.start && m < q.end
	}
	return m >= q.start || m < q.end
}

// End is when the quiet span that contains t ends (t itself when t is not
// quiet).
func (q QuietHours) End(t time.Time) time.Time {
	if !q.Contains(t) {
		return t
	}
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	end := day.Add(time.Duration(q.end) * time.Minute)
	if !end.After(t) {
		end = end.AddDate(0, 0, 1)
	}
	return end
}
