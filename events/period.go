package events

import (
	"fmt"
	"strings"
	"time"
)

// calendar is how periods and labels are cut: a time zone and the first
// day of the week.
type calendar struct {
	loc       *time.Location
	weekStart time.Weekday
}

// period is one day, week, month or year, [start, end) in the calendar's
// zone.
type period struct {
	level      Level
	start, end time.Time
}

// periodOf returns the period of the level that contains t.
func (c calendar) periodOf(level Level, t time.Time) period {
	t = t.In(c.loc)
	y, m, d := t.Date()
	var start, end time.Time
	switch level {
	case LevelDay:
		start = time.Date(y, m, d, 0, 0, 0, 0, c.loc)
		end = time.Date(y, m, d+1, 0, 0, 0, 0, c.loc)
	case LevelWeek:
		back := (int(t.Weekday()) - int(c.weekStart) + 7) % 7
		start = time.Date(y, m, d-back, 0, 0, 0, 0, c.loc)
		end = time.Date(y, m, d-back+7, 0, 0, 0, 0, c.loc)
	case LevelMonth:
		start = time.Date(y, m, 1, 0, 0, 0, 0, c.loc)
		end = time.Date(y, m+1, 1, 0, 0, 0, 0, c.loc)
	case LevelYear:
		start = time.Date(y, 1, 1, 0, 0, 0, 0, c.loc)
		end = time.Date(y+1, 1, 1, 0, 0, 0, 0, c.loc)
	default:
		return period{level: level, start: t, end: t}
	}
	return period{level: level, start: start, end: end}
}

// next is the period that follows p.
func (c calendar) next(p period) period { return c.periodOf(p.level, p.end) }

// label names a record's time as the seed does: 2025年, 2026年1月,
// 20260208-20260214, 20260208, 20260216 3:16.
func (c calendar) label(level Level, start time.Time) string {
	t := start.In(c.loc)
	switch level {
	case LevelYear:
		return fmt.Sprintf("%d年", t.Year())
	case LevelMonth:
		return fmt.Sprintf("%d年%d月", t.Year(), int(t.Month()))
	case LevelWeek:
		p := c.periodOf(LevelWeek, t)
		return p.start.Format("20060102") + "-" + p.end.AddDate(0, 0, -1).Format("20060102")
	case LevelDay:
		return t.Format("20060102")
	default:
		return fmt.Sprintf("%s %d:%02d", t.Format("20060102"), t.Hour(), t.Minute())
	}
}

// parent is the level a record is summarised into: events into days, days
// into weeks and months, months into years. Weeks cross month borders, so
// months are built from days, not weeks.
func parents(level Level) []Level {
	switch level {
	case LevelEvent:
		return []Level{LevelDay}
	case LevelDay:
		return []Level{LevelWeek, LevelMonth}
	case LevelMonth:
		return []Level{LevelYear}
	}
	return nil
}

// childLevel is the level a rollup is built from.
func childLevel(level Level) Level {
	switch level {
	case LevelDay:
		return LevelEvent
	case LevelWeek, LevelMonth:
		return LevelDay
	case LevelYear:
		return LevelMonth
	}
	return ""
}

// parseLabel reads a label back (label's inverse): its level and the
// times a record so labelled starts in, [from, to) — the minute of a
// topic, the first instant of a period.
func (c calendar) parseLabel(label string) (level Level, from, to time.Time, ok bool) {
	level = levelOfLabel(label)
	var y, m int
	var err error
	switch level {
	case LevelEvent:
		from, err = time.ParseInLocation("20060102 15:04", label, c.loc)
		return level, from, from.Add(time.Minute), err == nil
	case LevelDay:
		from, err = time.ParseInLocation("20060102", label, c.loc)
	case LevelWeek:
		from, err = time.ParseInLocation("20060102", label[:strings.IndexByte(label, '-')], c.loc)
	case LevelMonth:
		if _, err = fmt.Sscanf(label, "%d年%d月", &y, &m); err == nil && (m < 1 || m > 12) {
			err = fmt.Errorf("month %d", m)
		}
		from = time.Date(y, time.Month(m), 1, 0, 0, 0, 0, c.loc)
	case LevelYear:
		_, err = fmt.Sscanf(label, "%d年", &y)
		from = time.Date(y, 1, 1, 0, 0, 0, 0, c.loc)
	default:
		return "", time.Time{}, time.Time{}, false
	}
	return level, from, from.Add(time.Nanosecond), err == nil
}
